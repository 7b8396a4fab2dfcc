import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { call, startApi, type TestApi } from '../support/api.js';
import { waitFor } from '../support/wait.js';
import { signingKey, type SigningKey } from '../support/jwks-server.js';
import { token } from '../support/tokens.js';

/**
 * DESIGN 6.1: the JWKS fetch follows no redirect (a 3xx is a failed fetch, logged). The configured JWKS
 * (loopback) starts answering 302 to another origin serving another key under the same `kid`: following
 * it would make that origin's key trusted.
 */
const home = signingKey('k-shared');
const foreign = signingKey('k-shared');

/** A JWKS endpoint on 127.0.0.1 that serves `keys`, or answers 302 to `redirectTo` once set; counts requests. */
class LocalJwks {
  keys: readonly SigningKey[];
  redirectTo: string | undefined;
  fetches = 0;

  private constructor(
    private readonly server: Server,
    keys: readonly SigningKey[],
  ) {
    this.keys = keys;
    server.on('request', (_request, response) => {
      this.fetches += 1;
      if (this.redirectTo !== undefined) {
        response.writeHead(302, { location: this.redirectTo }).end();
        return;
      }
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ keys: this.keys.map((k) => k.jwk) }));
    });
  }

  static async start(keys: readonly SigningKey[]): Promise<LocalJwks> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return new LocalJwks(server, keys);
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/jwks.json`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let configured: LocalJwks;
let elsewhere: LocalJwks;
let api: TestApi;

beforeAll(async () => {
  configured = await LocalJwks.start([home]);
  elsewhere = await LocalJwks.start([foreign]);
  api = await startApi({ JWT_JWKS_FILE: '', JWT_JWKS_URI: configured.url, JWT_JWKS_REFRESH_SEC: '1' });
});

afterAll(async () => {
  await api?.close();
  await configured?.close();
  await elsewhere?.close();
});

it('a JWKS answering 302 to another origin is a failed fetch, logged: that origin never hands over a key', async () => {
  const reader = (key: SigningKey) => token({ sub: 'r', scope: 'portal.r' }, { key });
  expect((await call(api, 'GET', '/tags?limit=1', { token: await reader(home) })).statusCode).toBe(200);
  configured.redirectTo = elsewhere.url;
  // Two re-reads after the switch: the second starts only once the first has finished and been applied.
  const seen = configured.fetches;
  await waitFor(() => configured.fetches >= seen + 2, 'two JWKS re-reads answered 302');

  const forged = await call(api, 'GET', '/tags?limit=1', { token: await reader(foreign) });
  expect(forged.statusCode).toBe(401);
  expect(forged.headers['www-authenticate']).toBe('Bearer realm="bindery", error="invalid_token"');
  expect(elsewhere.fetches).toBe(0);
  // A failed re-read keeps the keys it had, so the issuer's own tokens still work.
  expect((await call(api, 'GET', '/tags?limit=1', { token: await reader(home) })).statusCode).toBe(200);
  const failures = api.logs.lines.filter((line) => line.msg === 'JWKS fetch failed');
  expect(failures.length).toBeGreaterThanOrEqual(1);
  expect(failures[0]).toMatchObject({ level: 40, jwksUri: configured.url });
  expect(String(failures[0]?.reason)).toContain('redirect refused (HTTP 302)');
});
