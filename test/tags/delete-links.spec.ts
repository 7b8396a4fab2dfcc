import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { sqlDuring, startApi, unique, type TestApi } from '../support/api.js';
import { callers } from '../support/tokens.js';
import { waitFor } from '../support/wait.js';
import { As, createTags, type Json } from '../entities/support.js';
import { readAll, tail } from '../events/feed.js';

/**
 * DESIGN 12: deleting a tag is a change of every entity it was linked to: in the same transaction each
 * gets its next version (so its ETag changes, as its tagIds did) and an `entity.untagged` event, in a
 * fixed number of statements however many links there were.
 */
let api: TestApi;
let db: DataSource;
let admin: string;
let asAdmin: As;
const H1 = unique('h1');

beforeAll(async () => {
  api = await startApi();
  db = api.app.get(DataSource);
  admin = await callers.admin();
  asAdmin = new As(api, admin);
});
afterAll(() => api.close());

async function create(path: string, body: Json, as: As = asAdmin): Promise<Json> {
  const res = await as.post(`/${path}`, body);
  expect(res.statusCode).toBe(201);
  return res.json<Json>();
}

const versionOf = async (table: string, id: string): Promise<Record<string, unknown> | undefined> =>
  (
    await db.query<Record<string, unknown>[]>(
      `select aggregate_version as version, update_user as "user", update_ts as ts from ${table} where ${table}_id = $1`,
      [id],
    )
  )[0];

describe('DELETE /tags/{tagId} and the entities it was linked to', () => {
  it('moves each linked entity to its next version and tells the feed entity.untagged, then tag.deleted', async () => {
    const [t, u] = await createTags(api, [unique('t'), unique('u')], H1);
    const writer = new As(api, await callers.writer(H1));
    const schema = await create('schemas', { schemaName: 's', hostId: H1, tagIds: [t, u] });
    const product = await create('products', { productName: 'p', hostId: H1, tagIds: [t] }, writer);
    const document = await create('documents', { title: 'd', hostId: H1, tagIds: [u] });
    const schemaId = schema.schemaId as string;
    const productId = product.productId as string;
    const documentId = document.documentId as string;
    expect((await asAdmin.get(`/schemas/${schemaId}`)).headers.etag).toBe('W/"1"');
    const start = await tail(api, admin);
    const before = Date.now();

    const res = await writer.delete(`/tags/${t}`);
    expect(res.statusCode).toBe(204);

    const schemaRead = await asAdmin.get(`/schemas/${schemaId}`);
    expect(schemaRead.headers.etag).toBe('W/"2"');
    // The deleter made the change, so it is the entities' updateUser (docs/entities.md).
    expect(schemaRead.json<Json>()).toMatchObject({ tagIds: [u], aggregateVersion: 2, updateUser: `w-${H1}` });
    expect(Date.parse(schemaRead.json<Json>().updateTs as string)).toBeGreaterThanOrEqual(before - 5);
    const productRead = await writer.get(`/products/${productId}`);
    expect(productRead.headers.etag).toBe('W/"2"');
    expect(productRead.json<Json>()).toMatchObject({ tagIds: [], aggregateVersion: 2 });
    // Not linked to the tag: untouched.
    expect((await asAdmin.get(`/documents/${documentId}`)).headers.etag).toBe('W/"1"');
    expect(await versionOf('document', documentId)).toMatchObject({ version: 1, user: 'root' });

    expect(await versionOf('schema', schemaId)).toMatchObject({ version: 2, user: `w-${H1}` });
    expect(await versionOf('product', productId)).toMatchObject({ version: 2, user: `w-${H1}` });
    const links = await db.query<{ n: number }[]>('select count(*)::int as n from entity_tag where tag_id = $1', [t]);
    expect(links[0]?.n).toBe(0);
    expect((await db.query('select 1 from tag where tag_id = $1', [t])).length).toBe(0);

    const events = (await readAll(api, admin, start)).filter(
      (e) => e.data.tagId === t || (e.data.tagIds as unknown[] | undefined)?.includes(t),
    );
    expect(events.map((e) => ({ type: e.type, actor: e.actor, data: e.data }))).toEqual([
      { type: 'entity.untagged', actor: `w-${H1}`, data: { entityType: 'product', entityId: productId, tagIds: [t] } },
      { type: 'entity.untagged', actor: `w-${H1}`, data: { entityType: 'schema', entityId: schemaId, tagIds: [t] } },
      { type: 'tag.deleted', actor: `w-${H1}`, data: { tagId: t, tagName: expect.any(String), hostId: H1 } },
    ]);
    const seqs = events.map((e) => e.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
  });

  it('an If-Match refusal changes no entity and tells nothing', async () => {
    const [t] = await createTags(api, [unique('t')]);
    const schemaId = (await create('schemas', { schemaName: 's', tagIds: [t] })).schemaId as string;
    const start = await tail(api, admin);
    expect((await asAdmin.delete(`/tags/${t}`, 'W/"9"')).statusCode).toBe(412);
    expect(await versionOf('schema', schemaId)).toMatchObject({ version: 1 });
    expect((await readAll(api, admin, start)).filter((e) => e.data.entityId === schemaId)).toEqual([]);
  });

  it('takes as many statements for hundreds of links as for one, and bumps and tells every entity', async () => {
    const [one, many] = await createTags(api, [unique('one'), unique('many')]);
    await create('schemas', { schemaName: 'single', tagIds: [one] });
    const prefix = unique('bulk').slice(0, 12);
    // 300 schemas and 150 products linked to `many`, written straight to the tables.
    for (const [table, name, count] of [
      ['schema', 'schema_name', 300],
      ['product', 'product_name', 150],
    ] as const) {
      await db.query(
        `insert into ${table} (${table}_id, ${name}, update_user, update_ts, aggregate_version)
         select $1 || '_' || i, 'bulk', 'seed', now(), 1 from generate_series(1, $2::int) i`,
        [prefix, count],
      );
      await db.query(
        `insert into entity_tag (entity_type, entity_id, entity_host_id, tag_id)
         select $3, $1 || '_' || i, null, $4 from generate_series(1, $2::int) i`,
        [prefix, count, table, many],
      );
    }
    const start = await tail(api, admin);
    const single = await sqlDuring(() => asAdmin.delete(`/tags/${one}`));
    expect(single.result.statusCode).toBe(204);
    const bulk = await sqlDuring(() => asAdmin.delete(`/tags/${many}`));
    expect(bulk.result.statusCode).toBe(204);
    expect(bulk.queries).toBe(single.queries);

    for (const [table, count] of [
      ['schema', 300],
      ['product', 150],
    ] as const) {
      const rows = await db.query<{ version: number; user: string; n: number }[]>(
        `select aggregate_version as version, update_user as "user", count(*)::int as n from ${table}
         where ${table}_id like $1 group by 1, 2`,
        [`${prefix}\\_%`],
      );
      expect(rows).toEqual([{ version: 2, user: 'root', n: count }]);
    }
    const events = (await readAll(api, admin, start)).filter(
      (e) => e.data.tagId === many || (e.data.tagIds as unknown[] | undefined)?.includes(many),
    );
    expect(events).toHaveLength(451);
    expect(events.slice(0, 450).every((e) => e.type === 'entity.untagged')).toBe(true);
    expect(events.at(-1)?.type).toBe('tag.deleted');
    expect(new Set(events.slice(0, 450).map((e) => JSON.stringify([e.data.entityType, e.data.entityId]))).size).toBe(
      450,
    );
  }, 30_000);

  it("a link write waiting on one of its tags holds none that sorts after it: that tag's deletion goes first (no deadlock)", async () => {
    const suffix = unique('').slice(1, 12);
    const other = `a${suffix}`;
    const doomed = `z${suffix}`;
    // The deleted tag is written first, so a plan reading the rows in heap order would reach it first.
    for (const tagId of [doomed, other]) {
      expect((await asAdmin.post('/tags', { tagId, tagName: unique(tagId) })).statusCode).toBe(201);
    }
    const schemaId = (await create('schemas', { schemaName: 'race', tagIds: [doomed] })).schemaId as string;
    const blocker = new pg.Client({ connectionString: process.env.DATABASE_URL });
    // Outside the blocker's transaction, whose view of pg_stat_activity would stay as first read.
    const watcher = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await Promise.all([blocker.connect(), watcher.connect()]);
    try {
      await blocker.query('begin');
      await blocker.query('select 1 from tag where tag_id = $1 for update', [other]);
      const write = asAdmin.put(`/schemas/${schemaId}/tags`, { tagIds: [other, doomed] });
      await waitFor(
        async () => {
          const { rows } = await watcher.query<{ n: number }>(
            `select count(*)::int as n from pg_stat_activity
             where datname = current_database() and wait_event_type = 'Lock' and query like $1`,
            ['%from tag where tag_id = any%'],
          );
          return (rows[0]?.n ?? 0) > 0;
        },
        'the writer waiting for the blocked tag',
        5000,
        25,
      );
      // Nothing holds the later tag while the writer waits: NOWAIT fails (55P03) if the writer locked it first.
      await watcher.query('begin');
      expect((await watcher.query('select 1 from tag where tag_id = $1 for update nowait', [doomed])).rowCount).toBe(1);
      await watcher.query('rollback');
      expect((await asAdmin.delete(`/tags/${doomed}`)).statusCode).toBe(204);
      await blocker.query('commit');
      // The writer then finds the tag gone: 400, nothing linked.
      expect((await write).statusCode).toBe(400);
      expect((await asAdmin.get(`/schemas/${schemaId}`)).json<Json>().tagIds).toEqual([]);
    } finally {
      await blocker.query('rollback').catch(() => undefined);
      await watcher.query('rollback').catch(() => undefined);
      await Promise.all([blocker.end(), watcher.end()]);
    }
  }, 30_000);
});
