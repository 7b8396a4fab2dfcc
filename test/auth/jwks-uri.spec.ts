import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, startApi, type TestApi } from '../support/api.js';
import { freePort, run, startBuilt } from '../support/processes.js';
import { ISSUER, KEYS, token } from '../support/tokens.js';
import { testKeyRingFile } from '../support/key-ring.js';

let server: Server;
let fetches = 0;
let api: TestApi;

beforeAll(async () => {
  const jwk = { ...KEYS.rs256.publicKey.export({ format: 'jwk' }), kid: KEYS.rs256.kid, alg: 'RS256', use: 'sig' };
  server = createServer((_req, res) => {
    fetches += 1;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  api = await startApi({ JWT_JWKS_FILE: '', JWT_JWKS_URI: `http://127.0.0.1:${port}/jwks.json` });
});

afterAll(async () => {
  await api.close();
  await new Promise((resolve) => server.close(resolve));
});

it('verifies with keys fetched from JWT_JWKS_URI, fetched once, and a flood of unknown kids costs one refetch', async () => {
  const good = await token({ sub: 'a', scope: 'portal.r' }, { key: KEYS.rs256 });
  for (let i = 0; i < 5; i += 1)
    expect((await call(api, 'GET', '/tags?limit=1', { token: good })).statusCode).toBe(200);
  expect(fetches).toBe(1);
  const unknown = await Promise.all(
    Array.from({ length: 20 }, async (_, i) =>
      call(api, 'GET', '/tags', { token: await token({ sub: 'a', scope: 'portal.r' }, { kid: `forged-${i}` }) }),
    ),
  );
  expect(unknown.map((r) => r.statusCode)).toEqual(Array(20).fill(401));
  expect(fetches).toBeLessThanOrEqual(2);
});

describe('JWT_JWKS_URI over http: with NODE_ENV=production (DESIGN 6.1)', () => {
  const production = (entry: string, extra: Record<string, string>) =>
    run(entry, [], {
      NODE_ENV: 'production',
      DATABASE_URL: process.env.DATABASE_URL ?? '',
      DATABASE_SESSION_URL: process.env.DATABASE_SESSION_URL ?? '',
      DATABASE_POOL_MODE: process.env.DATABASE_POOL_MODE ?? '',
      JWT_ISSUER: ISSUER,
      CONTROLLER_HOST_ID: 'h-prod',
      LISTEN_HOST: '127.0.0.1',
      API_PORT: '0',
      CONTROLLER_PORT: '0',
      ...extra,
    });

  it.each(['apps/api/main.js', 'apps/controller/main.js'])(
    '%s refuses to start on a non-loopback http: URL, with one line naming the setting and the way out',
    async (entry) => {
      const started = production(entry, { JWT_JWKS_URI: 'http://issuer.example/jwks.json' });
      expect(await started.exit()).toBe(1);
      expect(started.output()).toContain(
        'Invalid setting JWT_JWKS_URI: must be https: with NODE_ENV=production (http: only for loopback, or with JWT_JWKS_ALLOW_HTTP=true on a private network)',
      );
    },
    30_000,
  );

  it('starts on a loopback http: URL (api) and on any http: URL with JWT_JWKS_ALLOW_HTTP=true (controller)', async () => {
    const { port: jwksPort } = server.address() as AddressInfo;
    const common = {
      NODE_ENV: 'production',
      JWT_JWKS_FILE: '',
      CONTROLLER_HOST_ID: 'h-prod',
      CONFIG_KEYRING_FILE: testKeyRingFile(),
    };
    const apiPort = await freePort();
    const apiProcess = await startBuilt('apps/api/main.js', apiPort, {
      ...common,
      API_PORT: String(apiPort),
      JWT_JWKS_URI: `http://127.0.0.1:${jwksPort}/jwks.json`,
    });
    const controllerPort = await freePort();
    const controllerProcess = await startBuilt('apps/controller/main.js', controllerPort, {
      ...common,
      CONTROLLER_PORT: String(controllerPort),
      JWT_JWKS_URI: 'http://jwks.private.invalid/jwks.json',
      JWT_JWKS_ALLOW_HTTP: 'true',
    });
    try {
      // The api verifies with the keys it fetched over loopback.
      const good = await token({ sub: 'a', scope: 'portal.r' }, { key: KEYS.rs256 });
      const res = await fetch(`http://127.0.0.1:${apiPort}/tags?limit=1`, {
        headers: { authorization: `Bearer ${good}` },
      });
      expect(res.status).toBe(200);
    } finally {
      for (const started of [apiProcess, controllerProcess]) {
        started.child.kill('SIGTERM');
        expect(await started.exit()).toBe(0);
      }
    }
  }, 60_000);
});
