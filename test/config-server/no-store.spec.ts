import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, startApi, unique, type TestApi } from '../support/api.js';
import { token } from '../support/tokens.js';

/** Admin answers that carry decrypted values are never kept by a browser or a proxy; the rest are unchanged. */
let api: TestApi;
let admin: string;
const layer = `host=h-nostore&serviceId=${unique('svc')}`;
const files = { 'server.keystore': Buffer.from('-----BEGIN PRIVATE KEY-----').toString('base64') };

beforeAll(async () => {
  api = await startApi();
  admin = await token({ sub: 'alice', scope: 'portal.admin' });
});
afterAll(() => api.close());

const send = (method: 'GET' | 'PUT' | 'POST', path: string, body?: unknown, headers?: Record<string, string>) =>
  call(api, method, `/config-server/admin/${path}`, { token: admin, body, headers });

describe('Cache-Control on config admin answers', () => {
  it('is no-store on every answer that carries a value, and only there', async () => {
    const carrying = [
      await send('PUT', `properties?${layer}`, { properties: { 'db.password': 's3cret' } }),
      await send('PUT', `properties?${layer}`, { properties: { 'db.password': 'r0tated' } }),
      await send('GET', `properties?${layer}`),
      await send('PUT', `files?${layer}&kind=cert`, { files }),
      await send('GET', `files?${layer}&kind=cert`),
      await send('GET', `history/1?${layer}&include=files`),
      await send('POST', `rollback?${layer}&version=1`, undefined, { 'if-match': 'W/"3"' }),
    ];
    expect(carrying.map((res) => [res.statusCode, res.headers['cache-control']])).toEqual(
      carrying.map(() => [200, 'no-store']),
    );
    expect(carrying[2]?.json()).toMatchObject({ properties: { 'db.password': 'r0tated' } });

    const without = await send('GET', `history?${layer}`);
    expect(without.statusCode).toBe(200);
    expect(without.headers['cache-control']).toBeUndefined();
  });
});
