import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, startApi, unique, type TestApi } from '../support/api.js';
import { callers } from '../support/tokens.js';

/** DESIGN 7: a layer's version as its ETag, If-Match on its writes, and the list of layers. */
let api: TestApi;
let admin: string;

beforeAll(async () => {
  api = await startApi();
  admin = await callers.admin();
});
afterAll(() => api.close());

const at = (host: string, extra = '') => `host=${host}&serviceId=svc${extra}`;

async function put(path: string, query: string, body: unknown, ifMatch?: string) {
  return call(api, 'PUT', `/config-server/admin/${path}?${query}`, {
    token: admin,
    body,
    headers: ifMatch === undefined ? {} : { 'if-match': ifMatch },
  });
}

describe('config layer versions', () => {
  it('GET carries the version as ETag; PUT and DELETE honour If-Match; every write moves it on', async () => {
    const q = at(unique('lv'));
    const etag = async () =>
      (await call(api, 'GET', `/config-server/admin/properties?${q}`, { token: admin })).headers.etag;
    expect(await etag()).toBe('W/"0"');
    const first = await put('properties', q, { properties: { 'server.port': 1 } }, 'W/"0"');
    expect(first.statusCode).toBe(200);
    expect(first.headers.etag).toBe('W/"1"');
    // A writer that read version 0 is too late now: 412 in words, and nothing changed.
    const stale = await put('properties', q, { properties: { 'server.port': 2 } }, 'W/"0"');
    expect(stale.statusCode).toBe(412);
    expect(stale.json<{ detail: string }>().detail).toContain('version 1');
    const kept = await call(api, 'GET', `/config-server/admin/properties?${q}`, { token: admin });
    expect(kept.json<{ properties: unknown }>().properties).toEqual({ 'server.port': 1 });
    expect((await put('properties', q, { properties: { 'server.port': 2 } }, 'W/"1"')).headers.etag).toBe('W/"2"');
    // Files are part of the same layer: they move its version too.
    const files = await put('files', `${q}&kind=file`, { files: { 'a.txt': Buffer.from('a').toString('base64') } });
    expect(files.headers.etag).toBe('W/"3"');
    const staleDelete = await call(api, 'DELETE', `/config-server/admin/properties?${q}`, {
      token: admin,
      headers: { 'if-match': 'W/"2"' },
    });
    expect(staleDelete.statusCode).toBe(412);
    const deleted = await call(api, 'DELETE', `/config-server/admin/properties?${q}`, {
      token: admin,
      headers: { 'if-match': 'W/"3"' },
    });
    expect(deleted.statusCode).toBe(204);
    expect(await etag()).toBe('W/"4"');
    await call(api, 'DELETE', `/config-server/admin/files?${q}&kind=file`, { token: admin });
    // The emptied layer keeps counting (its history goes on, DESIGN 14): a stale W/"0" cannot recreate it.
    expect(await etag()).toBe('W/"5"');
    expect((await put('properties', q, { properties: { 'server.port': 3 } }, 'W/"0"')).statusCode).toBe(412);
  });

  it('two creators both sure the layer is new (If-Match W/"0"): one wins, the other gets 412', async () => {
    const q = at(unique('race'));
    const [a, b] = await Promise.all([
      put('properties', q, { properties: { 'a.b': 1 } }, 'W/"0"'),
      put('properties', q, { properties: { 'a.b': 2 } }, 'W/"0"'),
    ]);
    expect([a.statusCode, b.statusCode].sort()).toEqual([200, 412]);
  });
});

describe('GET /config-server/admin/layers', () => {
  it('lists the addresses that have a layer, with version and counts, paged, for admins only', async () => {
    const host = unique('ll');
    await put('properties', `host=${host}&serviceId=alpha`, { properties: { 'a.x': 1, 'a.y': 2 } });
    await put('files', `host=${host}&serviceId=alpha&kind=cert`, { files: { 'k.pem': 'AA==' } });
    await put('properties', `host=${host}&productId=p&productVersion=1.0&envTag=prod`, { properties: { 'b.x': 1 } });
    const res = await call(api, 'GET', `/config-server/admin/layers?host=${host}`, { token: admin });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      total: 2,
      layers: [
        {
          host,
          serviceId: 'alpha',
          productId: null,
          productVersion: null,
          envTag: null,
          aggregateVersion: 2,
          properties: 2,
          certs: 1,
          files: 0,
        },
        {
          host,
          serviceId: null,
          productId: 'p',
          productVersion: '1.0',
          envTag: 'prod',
          aggregateVersion: 1,
          properties: 1,
          certs: 0,
          files: 0,
        },
      ],
    });
    const page = await call(api, 'GET', `/config-server/admin/layers?host=${host}&offset=1&limit=1`, { token: admin });
    expect(page.json<{ total: number; layers: unknown[] }>()).toMatchObject({ total: 2, layers: [{ productId: 'p' }] });
    const reader = await callers.reader(host);
    expect((await call(api, 'GET', '/config-server/admin/layers', { token: reader })).statusCode).toBe(403);
    expect((await call(api, 'GET', '/config-server/admin/layers?limit=0', { token: admin })).statusCode).toBe(400);
  });
});
