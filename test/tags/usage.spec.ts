import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, sqlDuring, startApi, unique, type TestApi } from '../support/api.js';
import { callers } from '../support/tokens.js';

/** DESIGN 12: usage counts and the reverse lookup, counting only what the caller can see. */
let api: TestApi;
let admin: string;
const hostA = unique('ua').slice(0, 20);
const hostB = unique('ub').slice(0, 20);
const id = (p: string): string => unique(p).replace(/-/g, '').slice(0, 22);
let tagId: string;
let otherTagId: string;
const ids = { s1: id('s1'), s2: id('s2'), s3: id('s3'), p1: id('p1'), d1: id('d1') };

async function create(path: string, body: Record<string, unknown>): Promise<void> {
  const res = await call(api, 'POST', path, { token: admin, body });
  expect(res.statusCode).toBe(201);
}

beforeAll(async () => {
  api = await startApi();
  admin = await callers.admin();
  const tag = await call(api, 'POST', '/tags', { token: admin, body: { tagName: unique('used') } });
  tagId = tag.json<{ tagId: string }>().tagId;
  const other = await call(api, 'POST', '/tags', { token: admin, body: { tagName: unique('hb-tag'), hostId: hostB } });
  otherTagId = other.json<{ tagId: string }>().tagId;
  const tagIds = [tagId];
  await create('/schemas', { schemaId: ids.s1, schemaName: 'global', tagIds });
  await create('/schemas', { schemaId: ids.s2, schemaName: 'a', hostId: hostA, tagIds });
  await create('/schemas', { schemaId: ids.s3, schemaName: 'b', hostId: hostB, tagIds });
  await create('/products', { productId: ids.p1, productName: 'a', hostId: hostA, tagIds });
  await create('/documents', { documentId: ids.d1, title: 'b', hostId: hostB, tagIds });
});
afterAll(() => api.close());

describe('include=usage', () => {
  it('counts per entity type only the entities the caller can see', async () => {
    const all = await call(api, 'GET', `/tags/${tagId}?include=usage`, { token: admin });
    expect(all.json<{ usage: unknown }>().usage).toEqual({ schema: 3, product: 1, document: 1 });
    const asA = await call(api, 'GET', `/tags/${tagId}?include=usage`, { token: await callers.reader(hostA) });
    expect(asA.json<{ usage: unknown }>().usage).toEqual({ schema: 2, product: 1, document: 0 });
    const plain = await call(api, 'GET', `/tags/${tagId}`, { token: admin });
    expect(plain.json()).not.toHaveProperty('usage');
  });

  it('follows an entity that moves to another host', async () => {
    const usageAs = async (host: string) =>
      (await call(api, 'GET', `/tags/${tagId}?include=usage`, { token: await callers.reader(host) })).json<{
        usage: Record<string, number>;
      }>().usage;
    const moved = await call(api, 'PUT', `/schemas/${ids.s2}`, {
      token: admin,
      body: { schemaName: 'a', hostId: hostB },
    });
    expect(moved.statusCode).toBe(200);
    expect((await usageAs(hostA)).schema).toBe(1);
    expect((await usageAs(hostB)).schema).toBe(3);
    await call(api, 'PUT', `/schemas/${ids.s2}`, { token: admin, body: { schemaName: 'a', hostId: hostA } });
    expect((await usageAs(hostA)).schema).toBe(2);
  });

  it('on a list, one statement counts the whole page however many tags it holds', async () => {
    const prefix = unique('page');
    for (let i = 0; i < 6; i++) await call(api, 'POST', '/tags', { token: admin, body: { tagName: `${prefix}-${i}` } });
    const statements = async (limit: number) =>
      (
        await sqlDuring(() =>
          call(api, 'GET', `/tags?tagName=${prefix}&limit=${limit}&include=usage`, { token: admin }),
        )
      ).queries;
    const two = await statements(2);
    const six = await statements(6);
    expect(six).toBe(two);
    const page = await call(api, 'GET', `/tags?tagName=${prefix}&include=usage`, { token: admin });
    for (const tag of page.json<{ tags: { usage: unknown }[] }>().tags) {
      expect(tag.usage).toEqual({ schema: 0, product: 0, document: 0 });
    }
    expect((await call(api, 'GET', '/tags?include=everything', { token: admin })).statusCode).toBe(400);
  });
});

describe('GET /tags/{tagId}/entities', () => {
  type Page = { total: number; entities: { entityType: string; entityId: string }[] };
  const get = async (query: string, token = admin): Promise<Page> => {
    const res = await call(api, 'GET', `/tags/${tagId}/entities${query}`, { token });
    expect(res.statusCode).toBe(200);
    return res.json<Page>();
  };

  it('lists the visible entities carrying the tag, by type then id, with the total', async () => {
    const all = await get('');
    expect(all.total).toBe(5);
    expect(all.entities).toEqual([
      { entityType: 'document', entityId: ids.d1 },
      { entityType: 'product', entityId: ids.p1 },
      ...[ids.s1, ids.s2, ids.s3].sort().map((entityId) => ({ entityType: 'schema', entityId })),
    ]);
    const asA = await get('', await callers.reader(hostA));
    expect(asA.total).toBe(3);
    expect(asA.entities.map((e) => e.entityId).sort()).toEqual([ids.p1, ids.s1, ids.s2].sort());
  });

  it('filters by entityType and pages with offset and limit', async () => {
    const schemas = await get('?entityType=schema&limit=2');
    expect(schemas.total).toBe(3);
    expect(schemas.entities.map((e) => e.entityId)).toEqual([ids.s1, ids.s2, ids.s3].sort().slice(0, 2));
    const rest = await get('?entityType=schema&offset=2&limit=2');
    expect(rest.entities.map((e) => e.entityId)).toEqual([ids.s1, ids.s2, ids.s3].sort().slice(2));
    expect((await call(api, 'GET', `/tags/${tagId}/entities?entityType=tag`, { token: admin })).statusCode).toBe(400);
  });

  it('answers 404 for a tag the caller cannot see, like a missing one', async () => {
    const res = await call(api, 'GET', `/tags/${otherTagId}/entities`, { token: await callers.reader(hostA) });
    expect(res.statusCode).toBe(404);
    expect((await call(api, 'GET', `/tags/${id('none')}/entities`, { token: admin })).statusCode).toBe(404);
  });
});
