import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { createServer as createHttpsServer, request as httpsRequest, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeJwt } from 'jose';
import * as client from 'openid-client';
import { ISSUER_DISCOVERY_WARNING } from '#platform';
import { dataDir, freePort, requireBuild, run, startBuilt, type Spawned } from '../support/processes.js';
import { writeIssuerKeyFile } from '../support/tokens.js';
import { testKeyRingFile } from '../support/key-ring.js';
import { testDatabaseEnv } from '../support/database.js';

/**
 * Issue 41 and DESIGN 10: a standard OAuth client (openid-client 6) discovers the built api's issuer by
 * RFC 8414 (`algorithm: 'oauth2'`) and runs the client-credentials grant, in dev mode (the issuer is the
 * api's URL, DESIGN 6.5) and production-like behind a TLS terminator of the test's own.
 */

const sh = promisify(execFile);

interface Registered {
  readonly clientId: string;
  readonly secret: string;
}

/** `npm run client:create` as an operator runs it, with the api's settings; the secret is printed once. */
async function createClient(env: Record<string, string>, args: string[]): Promise<Registered> {
  const clientId = `oidc-${randomUUID().slice(0, 8)}`;
  // The suite's database as the api reaches it: behind CI's PgBouncer, its declared pool mode too.
  const created = run('scripts/client-create.js', ['--id', clientId, ...args], { ...testDatabaseEnv(), ...env });
  expect(await created.exit()).toBe(0);
  const secret = /client secret \(shown once\): (\S+)/.exec(created.output())?.[1];
  if (secret === undefined) throw new Error(`no secret in client:create output:\n${created.output()}`);
  return { clientId, secret };
}

function stop(spawned: Spawned | undefined): Promise<unknown> {
  spawned?.child.kill('SIGTERM');
  return spawned?.exit() ?? Promise.resolve();
}

/** A runtime's config read (DESIGN 6.2): its token's host and sid must be the ones asked for. */
function configRead(base: string, token: string, host: string, sid: string, get: client.CustomFetch = fetch) {
  const query = new URLSearchParams({ host, serviceId: sid, envTag: 'dev' });
  return get(`${base}/config-server/configs?${query.toString()}`, {
    method: 'GET',
    headers: { authorization: `Bearer ${token}` },
    body: undefined,
    redirect: 'manual',
  });
}

describe('openid-client against the built api in dev mode', () => {
  let dir: string;
  let env: Record<string, string>;
  let issuer: string;
  let controllerUrl: string;
  let api: Spawned | undefined;
  let controller: Spawned | undefined;
  // openid-client refuses http: unless told; the dev api is plain http on loopback.
  const insecure: client.DiscoveryRequestOptions = { algorithm: 'oauth2', execute: [client.allowInsecureRequests] };

  beforeAll(async () => {
    requireBuild();
    dir = await dataDir();
    const apiPort = await freePort();
    const controllerPort = await freePort();
    // No key source at all (the support's JWKS file and issuer emptied): dev mode, with a fresh data dir.
    env = {
      BINDERY_DATA_DIR: dir,
      API_PORT: String(apiPort),
      CONTROLLER_PORT: String(controllerPort),
      JWT_JWKS_FILE: '',
      JWT_ISSUER: '',
    };
    issuer = `http://localhost:${apiPort}`;
    controllerUrl = `http://127.0.0.1:${controllerPort}`;
    api = await startBuilt('apps/api/main.js', apiPort, env);
    // As `npm start` runs it: the same API_PORT, so it expects the api's URL as `iss` too.
    controller = await startBuilt('apps/controller/main.js', controllerPort, env);
  }, 90_000);

  afterAll(async () => {
    await Promise.all([stop(api), stop(controller)]);
    await rm(dir, { recursive: true, force: true });
  });

  it("discovers http://localhost:API_PORT, and the grant's token reads its own config, no other", async () => {
    const host = `oidc-host-${randomUUID().slice(0, 8)}`;
    const runtime = await createClient(env, [
      '--scope',
      'portal.r',
      '--host',
      host,
      '--sid',
      'petstore',
      '--env',
      'dev',
    ]);
    const config = await client.discovery(
      new URL(issuer),
      runtime.clientId,
      undefined,
      client.ClientSecretBasic(runtime.secret),
      insecure,
    );
    expect(config.serverMetadata()).toMatchObject({
      issuer,
      token_endpoint: `${issuer}/oauth2/token`,
      jwks_uri: `${issuer}/.well-known/jwks.json`,
      grant_types_supported: ['client_credentials'],
    });
    const tokens = await client.clientCredentialsGrant(config, { env: 'dev' });
    expect(tokens).toMatchObject({ token_type: 'bearer', scope: 'portal.r' });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ iss: issuer, host, sid: 'petstore', env: 'dev' });
    expect((await configRead(issuer, tokens.access_token, host, 'petstore')).status).toBe(200);
    expect((await configRead(issuer, tokens.access_token, host, 'inventory')).status).toBe(403);
  });

  it('refuses to discover the issuer under another URL of the same api (RFC 8414 section 3.3)', async () => {
    const elsewhere = new URL(issuer.replace('localhost', '127.0.0.1'));
    await expect(client.discovery(elsewhere, 'any', undefined, client.None(), insecure)).rejects.toMatchObject({
      code: 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED',
    });
  });

  it("the dev-mode controller accepts the api issuer's tokens", async () => {
    const operator = await createClient(env, ['--scope', 'portal.r portal.admin']);
    const config = await client.discovery(
      new URL(issuer),
      operator.clientId,
      undefined,
      client.ClientSecretPost(operator.secret),
      insecure,
    );
    const { access_token: token } = await client.clientCredentialsGrant(config);
    const instances = await fetch(`${controllerUrl}/instances`, { headers: { authorization: `Bearer ${token}` } });
    expect(instances.status).toBe(200);
  });
});

/** Node's fetch takes no CA of its own: this one trusts exactly `ca`, as openid-client's customFetch. */
function trustingFetch(ca: string): client.CustomFetch {
  return (url, options) =>
    new Promise<Response>((resolve, reject) => {
      const { body } = options;
      if (body instanceof ReadableStream) {
        reject(new Error('streamed bodies are not needed here'));
        return;
      }
      const payload = body === undefined || body === null ? undefined : bodyBytes(body);
      const request = httpsRequest(url, { method: options.method, headers: options.headers, ca }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', reject);
        response.on('end', () => {
          const status = response.statusCode ?? 502;
          const content = status === 204 || status === 304 ? null : Buffer.concat(chunks);
          resolve(new Response(content, { status, headers: headersOf(response.headers) }));
        });
      });
      request.on('error', reject);
      request.end(payload);
    });
}

function bodyBytes(body: string | URLSearchParams | ArrayBuffer | Uint8Array): string | Uint8Array {
  if (typeof body === 'string') return body;
  if (body instanceof URLSearchParams) return body.toString();
  return body instanceof ArrayBuffer ? new Uint8Array(body) : body;
}

function headersOf(incoming: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming)) {
    for (const one of Array.isArray(value) ? value : [value]) if (one !== undefined) headers.append(name, one);
  }
  return headers;
}

/** A TLS terminator in front of the api, as production has: https on `port`, plain http to the api. */
function terminate(key: string, cert: string, apiPort: number): Server {
  return createHttpsServer({ key, cert }, (req, res) => {
    const upstream = httpRequest(
      { host: '127.0.0.1', port: apiPort, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
}

describe('openid-client against the built api in production, behind TLS', () => {
  let dir: string;
  let env: Record<string, string>;
  let base: string;
  let cert: string;
  let api: Spawned | undefined;
  let proxy: Server | undefined;

  beforeAll(async () => {
    requireBuild();
    dir = await mkdtemp(join(tmpdir(), 'bindery-tls-'));
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    // A self-signed certificate for localhost, made here: Node's crypto cannot sign an X.509 certificate.
    await sh('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ]);
    cert = await readFile(certFile, 'utf8');
    const apiPort = await freePort();
    const tlsPort = await freePort();
    base = `https://localhost:${tlsPort}`;
    env = {
      NODE_ENV: 'production',
      CONFIG_KEYRING_FILE: testKeyRingFile(),
      API_PORT: String(apiPort),
      JWT_JWKS_FILE: '',
      TOKEN_ISSUER_KEY_FILE: writeIssuerKeyFile().file,
      // The same URL for both: what makes the issuer discoverable (DESIGN 10).
      JWT_ISSUER: base,
      PUBLIC_BASE_URL: base,
      CONTROLLER_HOST_ID: 'oidc-prod',
      LOG_LEVEL: 'info',
    };
    api = await startBuilt('apps/api/main.js', apiPort, env);
    const server = terminate(await readFile(keyFile, 'utf8'), cert, apiPort);
    proxy = server;
    await new Promise<void>((listening) => server.listen(tlsPort, '127.0.0.1', listening));
    expect((server.address() as AddressInfo).port).toBe(tlsPort);
  }, 90_000);

  afterAll(async () => {
    proxy?.closeAllConnections();
    await new Promise((closed) => (proxy === undefined ? closed(undefined) : proxy.close(closed)));
    await stop(api);
    await rm(dir, { recursive: true, force: true });
  });

  it('discovers the https issuer and runs the grant; the token reads the config through the terminator', async () => {
    const host = `oidc-host-${randomUUID().slice(0, 8)}`;
    const runtime = await createClient(env, [
      '--scope',
      'portal.r',
      '--host',
      host,
      '--sid',
      'petstore',
      '--env',
      'dev',
    ]);
    const trusting = trustingFetch(cert);
    // Plain https: no allowInsecureRequests; the customFetch only adds the test's CA.
    const config = await client.discovery(
      new URL(base),
      runtime.clientId,
      undefined,
      client.ClientSecretPost(runtime.secret),
      { algorithm: 'oauth2', [client.customFetch]: trusting },
    );
    expect(config.serverMetadata()).toMatchObject({ issuer: base, token_endpoint: `${base}/oauth2/token` });
    const tokens = await client.clientCredentialsGrant(config, { scope: 'portal.r', env: 'dev' });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ iss: base, host, sid: 'petstore', env: 'dev' });
    const read = await configRead(base, tokens.access_token, host, 'petstore', trusting);
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual({});
    // JWT_ISSUER equals PUBLIC_BASE_URL: the start did not warn that standard clients cannot discover it.
    expect(api?.output()).not.toContain(ISSUER_DISCOVERY_WARNING);
  });
});
