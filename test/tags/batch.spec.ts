import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { call, startApi, unique, type TestApi } from '../support/api.js';
import { callers } from '../support/tokens.js';
import { createSchema, newId, schemaLinks } from './batch-support.js';

/** DESIGN 12: POST /tags/batch. */
let api: TestApi;
let db: DataSource;
let admin: string;
const host = unique('bh').slice(0, 20);

type Result = { index: number; status: number; detail?: string };

beforeAll(async () => {
  api = await startApi();
  db = api.app.get(DataSource);
  admin = await callers.admin();
});
afterAll(() => api.close());

async function tags(n: number, prefix = unique('bt')): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await call(api, 'POST', '/tags', { token: admin, body: { tagName: `${prefix}-${i}` } });
    ids.push(res.json<{ tagId: string }>().tagId);
  }
  return ids;
}

const schema = (body: Record<string, unknown> = {}): Promise<string> => createSchema(api, admin, body);
const linksOf = (schemaId: string): Promise<string[]> => schemaLinks(db, schemaId);

const batch = (operations: unknown[], token = admin, query = '') =>
  call(api, 'POST', `/tags/batch${query}`, { token, body: { operations } });

describe('POST /tags/batch', () => {
  it('applies each operation by the single-write rules and answers one result per operation, in order', async () => {
    const [t1, t2] = await tags(2);
    const mine = await schema({ hostId: host });
    const global = await schema();
    const writer = await callers.writer(host);
    const res = await batch(
      [
        { op: 'add', entityType: 'schema', entityId: mine, tagIds: [t1, t2] },
        { op: 'add', entityType: 'schema', entityId: newId('none'), tagIds: [t1] },
        { op: 'add', entityType: 'schema', entityId: mine, tagIds: [newId('nt')] },
        { op: 'add', entityType: 'schema', entityId: global, tagIds: [t1] },
        { op: 'remove', entityType: 'schema', entityId: mine, tagIds: [t2] },
        { op: 'add', entityType: 'schema', entityId: 'not an id!', tagIds: [t1] },
      ],
      writer,
    );
    expect(res.statusCode).toBe(200);
    const results = res.json<{ results: Result[] }>().results;
    expect(results.map((r) => [r.index, r.status])).toEqual([
      [0, 200],
      [1, 404],
      [2, 400],
      [3, 403],
      [4, 200],
      [5, 404],
    ]);
    expect(results[2]?.detail).toContain('Unknown tag ids');
    expect(results[0]).not.toHaveProperty('detail');
    // Operations run in their own transactions but take effect as ordered for one entity: add, then remove.
    expect(await linksOf(mine)).toEqual([t1]);
    expect(await linksOf(global)).toEqual([]);
    // Added, then removed one: two changes of the entity, so version 3; removing what is not linked is no change.
    const version = async () =>
      (await call(api, 'GET', `/schemas/${mine}`, { token: admin })).json<{ aggregateVersion: number }>()
        .aggregateVersion;
    expect(await version()).toBe(3);
    const again = await batch([{ op: 'remove', entityType: 'schema', entityId: mine, tagIds: [t2] }]);
    expect(again.json<{ results: Result[] }>().results[0]?.status).toBe(200);
    expect(await version()).toBe(3);
  });

  it('atomic=true: all or nothing, 409 naming the first failing operation', async () => {
    const [t1] = await tags(1);
    const a = await schema();
    const b = await schema();
    const failing = await batch(
      [
        { op: 'add', entityType: 'schema', entityId: a, tagIds: [t1] },
        { op: 'add', entityType: 'schema', entityId: newId('gone'), tagIds: [t1] },
        { op: 'add', entityType: 'schema', entityId: b, tagIds: [t1] },
      ],
      admin,
      '?atomic=true',
    );
    expect(failing.statusCode).toBe(409);
    expect(failing.headers['content-type']).toContain('application/problem+json');
    expect(failing.json<{ detail: string }>().detail).toMatch(/^operation 1 failed \(404\)/);
    expect(await linksOf(a)).toEqual([]);
    const ok = await batch(
      [
        { op: 'add', entityType: 'schema', entityId: a, tagIds: [t1] },
        { op: 'add', entityType: 'schema', entityId: b, tagIds: [t1] },
      ],
      admin,
      '?atomic=true',
    );
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({
      results: [
        { index: 0, status: 200 },
        { index: 1, status: 200 },
      ],
    });
    expect(await linksOf(b)).toEqual([t1]);
  });

  it('refuses the whole request (400) for 1,001 operations, an unknown op or entityType, a control character in an id, and writes nothing', async () => {
    const [t1] = await tags(1);
    const a = await schema();
    const op = { op: 'add', entityType: 'schema', entityId: a, tagIds: [t1] };
    for (const operations of [
      Array.from({ length: 1001 }, () => op),
      [op, { ...op, op: 'replace' }],
      [op, { ...op, entityType: 'tag' }],
      // DESIGN 3: control characters in ids are 400, not that operation's 404.
      [op, { ...op, entityId: `${a}\u0000` }],
      [op, { ...op, entityId: 'a\tb' }],
      [],
    ]) {
      const res = await batch(operations);
      expect(res.statusCode).toBe(400);
    }
    expect(
      (await call(api, 'POST', '/tags/batch?atomic=maybe', { token: admin, body: { operations: [op] } })).statusCode,
    ).toBe(400);
    expect(await linksOf(a)).toEqual([]);
    expect((await batch([op], await callers.reader(host))).statusCode).toBe(403);
  });

  it('holds the 50-tag cap when two batches tag one entity at once', async () => {
    const base = await tags(45);
    const extraA = await tags(5);
    const extraB = await tags(5);
    const target = await schema({ tagIds: base });
    const [first, second] = await Promise.all([
      batch([{ op: 'add', entityType: 'schema', entityId: target, tagIds: extraA }]),
      batch([{ op: 'add', entityType: 'schema', entityId: target, tagIds: extraB }]),
    ]);
    const statuses = [first, second].map((res) => res.json<{ results: Result[] }>().results[0]?.status).sort();
    expect(statuses).toEqual([200, 400]);
    expect(await linksOf(target)).toHaveLength(50);
  });

  it('takes bodies up to 4 MiB on this route only', async () => {
    const [t1] = await tags(1);
    const a = await schema();
    // 1,000 operations naming 50 ids each (most unknown): about 1.4 MB, over the 1 MiB of other routes.
    const ids = Array.from({ length: 49 }, (_, i) => `x${String(i).padStart(21, '0')}`);
    const operations = Array.from({ length: 1000 }, (_, i) => ({
      op: 'remove',
      entityType: 'schema',
      entityId: i === 0 ? a : newId('big'),
      tagIds: [t1, ...ids],
    }));
    const payload = JSON.stringify({ operations });
    expect(Buffer.byteLength(payload)).toBeGreaterThan(1024 * 1024);
    const res = await call(api, 'POST', '/tags/batch', { token: admin, body: { operations } });
    expect(res.statusCode).toBe(200);
    expect(res.json<{ results: Result[] }>().results).toHaveLength(1000);
    const elsewhere = await call(api, 'POST', '/tags', {
      token: admin,
      body: { tagName: 'x', tagDesc: 'y'.repeat(1100 * 1024) },
    });
    expect(elsewhere.statusCode).toBe(413);
    const huge = await call(api, 'POST', '/tags/batch', {
      token: admin,
      headers: { 'content-type': 'application/json' },
      body: { operations, padding: 'z'.repeat(3 * 1024 * 1024) },
    });
    expect(huge.statusCode).toBe(413);
  }, 60_000);
});
