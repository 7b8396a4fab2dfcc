import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { call, startApi, type TestApi } from '../support/api.js';
import { KEYS, token } from '../support/tokens.js';

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
