import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { call, sqlDuring, startApi, type TestApi } from '../support/api.js';
import { callers } from '../support/tokens.js';
import { waitFor } from '../support/wait.js';
import { createSchema, newId, schemaLinks } from './batch-support.js';

/**
 * DESIGN 12, POST /tags/batch worked out for the whole batch at once: operations on one entity in request
 * order (each with its own version and event), the cap counted as the batch goes, host rules per
 * operation, links written meanwhile by others counted, no deadlock with concurrent writers, and a number
 * of statements that does not grow with the operations.
 */
let api: TestApi;
let db: DataSource;
let admin: string;

type Result = { index: number; status: number; detail?: string };
type Operation = { op: 'add' | 'remove'; entityType: string; entityId: string; tagIds: string[] };

beforeAll(async () => {
  api = await startApi();
  db = api.app.get(DataSource);
  admin = await callers.admin();
});
afterAll(() => api.close());

/** `n` tags with ids made here, so a test can choose their sort order; `hostId` null: global. */
async function tags(n: number, hostId: string | null = null, prefix = newId('bt').slice(0, 16)): Promise<string[]> {
  const ids = Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(3, '0')}`);
  await db.query(
    `insert into tag (tag_id, tag_name, host_id, update_user) select id, id, $2, 'test' from unnest($1::varchar[]) id`,
    [ids, hostId],
  );
  return ids;
}

const schema = (body: Record<string, unknown> = {}): Promise<string> => createSchema(api, admin, body);
const linksOf = (schemaId: string): Promise<string[]> => schemaLinks(db, schemaId);

const stateOf = async (schemaId: string): Promise<{ version: number; user: string }> =>
  (
    await db.query<{ version: number; user: string }[]>(
      `select aggregate_version as version, update_user as "user" from schema where schema_id = $1`,
      [schemaId],
    )
  )[0] ?? { version: 0, user: '' };

const eventsOf = async (schemaId: string): Promise<{ type: string; actor: string; tagIds: string[] }[]> =>
  db.query(
    `select type, actor, data->'tagIds' as "tagIds" from change_event
     where data->>'entityType' = 'schema' and data->>'entityId' = $1 and type like 'entity.%tagged' order by seq`,
    [schemaId],
  );

const batch = (operations: Operation[], token = admin, query = '') =>
  call(api, 'POST', `/tags/batch${query}`, { token, body: { operations } });

const resultsOf = (res: Awaited<ReturnType<typeof batch>>): Result[] => {
  expect(res.statusCode).toBe(200);
  return res.json<{ results: Result[] }>().results;
};

const add = (entityId: string, tagIds: string[]): Operation => ({ op: 'add', entityType: 'schema', entityId, tagIds });
const remove = (entityId: string, tagIds: string[]): Operation => ({
  op: 'remove',
  entityType: 'schema',
  entityId,
  tagIds,
});

describe('POST /tags/batch, operations worked out together', () => {
  it('applies operations on one entity in request order, each a version and an event of its own', async () => {
    const [t1, t2, t3] = await tags(3);
    const target = await schema({ tagIds: [t3] });
    const results = resultsOf(
      await batch([add(target, [t1, t2]), remove(target, [t1, t3]), add(target, [t1]), remove(target, [t1])]),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(await linksOf(target)).toEqual([t2]);
    expect(await stateOf(target)).toEqual({ version: 5, user: 'root' });
    expect(await eventsOf(target)).toEqual([
      { type: 'entity.tagged', actor: 'root', tagIds: [t3] },
      { type: 'entity.tagged', actor: 'root', tagIds: [t1, t2] },
      { type: 'entity.untagged', actor: 'root', tagIds: [t1, t3] },
      { type: 'entity.tagged', actor: 'root', tagIds: [t1] },
      { type: 'entity.untagged', actor: 'root', tagIds: [t1] },
    ]);
    const etag = (await call(api, 'GET', `/schemas/${target}`, { token: admin })).headers.etag;
    expect(etag).toBe('W/"5"');
  });

  it('counts the cap as the batch goes: a refused addition changes nothing and later operations see that', async () => {
    const base = await tags(48);
    const extra = await tags(4);
    const target = await schema({ tagIds: base });
    const results = resultsOf(
      await batch([
        add(target, [extra[0], extra[1]]),
        add(target, [extra[2]]),
        add(target, [extra[0], base[0]]),
        remove(target, [extra[1]]),
        add(target, [extra[2], extra[3]]),
        add(target, [extra[2]]),
      ]),
    );
    expect(results.map((r) => r.status)).toEqual([200, 400, 200, 200, 400, 200]);
    expect(results[1]?.detail).toBe(`schema ${target} would have 51 tags; at most 50 are allowed`);
    expect(results[4]?.detail).toBe(`schema ${target} would have 51 tags; at most 50 are allowed`);
    expect(await linksOf(target)).toEqual([...base, extra[0], extra[2]].sort());
    // Created (1), then three effective operations: the third added nothing new.
    expect((await stateOf(target)).version).toBe(4);
    expect((await eventsOf(target)).slice(1).map((e) => [e.type, e.tagIds])).toEqual([
      ['entity.tagged', [extra[0], extra[1]]],
      ['entity.untagged', [extra[1]]],
      ['entity.tagged', [extra[2]]],
    ]);
  });

  it('applies the host rules per operation, and counts links to tags the caller cannot see', async () => {
    const host = newId('h').slice(0, 20);
    const other = newId('o').slice(0, 20);
    const [global] = await tags(1);
    const [mine] = await tags(1, host);
    const [theirs] = await tags(1, other);
    const own = await schema({ hostId: host });
    const foreign = await schema({ hostId: other });
    const shared = await schema();
    // `own` is linked to 49 tags: 48 by an admin, and one of another host, which `own`'s host cannot see, by a
    // link written before link writes checked the entity's host.
    const many = await tags(48);
    expect(resultsOf(await batch([add(own, many)]))[0]?.status).toBe(200);
    await db.query(
      `insert into entity_tag (entity_type, entity_id, entity_host_id, tag_id) values ('schema', $1, $2, $3)`,
      [own, host, theirs],
    );
    const writer = await callers.writer(host);
    const results = resultsOf(
      await batch(
        [
          add(foreign, [global]),
          add(shared, [global]),
          add(own, [theirs]),
          add(own, [mine, global]),
          add(own, [mine]),
          remove(own, [theirs]),
          remove(own, [mine]),
          add(own, [global]),
        ],
        writer,
      ),
    );
    expect(results.map((r) => r.status)).toEqual([404, 403, 400, 400, 200, 400, 200, 200]);
    expect(results[0]?.detail).toBe(`No schema with schemaId ${foreign}`);
    expect(results[1]?.detail).toBe(
      'Writing a global schema needs the capability tags:admin (or the scope portal.admin)',
    );
    expect(results[2]?.detail).toBe(`Unknown tag ids: ${theirs}`);
    expect(results[3]?.detail).toBe(`schema ${own} would have 51 tags; at most 50 are allowed`);
    expect(results[5]?.detail).toBe(`Unknown tag ids: ${theirs}`);
    expect(await linksOf(own)).toEqual([...many, global, theirs].sort());
    expect(await linksOf(shared)).toEqual([]);
    expect(await stateOf(own)).toEqual({ version: 5, user: `w-${host}` });
  });

  it('atomic=true works the batch out the same way: 409 at the first refusal, nothing written', async () => {
    const base = await tags(49);
    const [t1, t2] = await tags(2);
    const target = await schema({ tagIds: base });
    const ops = [remove(target, [base[0]]), add(target, [t1, t2]), add(target, [base[0]])];
    const failing = await batch(ops, admin, '?atomic=true');
    expect(failing.statusCode).toBe(409);
    expect(failing.json<{ detail: string }>().detail).toBe(
      `operation 2 failed (400): schema ${target} would have 51 tags; at most 50 are allowed; nothing was written`,
    );
    expect(await linksOf(target)).toEqual(base);
    expect(await stateOf(target)).toEqual({ version: 1, user: 'root' });
    const ok = await batch([...ops.slice(0, 2), remove(target, [t1]), add(target, [base[0]])], admin, '?atomic=true');
    expect(resultsOf(ok).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(await linksOf(target)).toEqual([...base, t2].sort());
    expect((await stateOf(target)).version).toBe(5);
  });

  it('counts links another writer committed while the batch waited for the entity', async () => {
    const base = await tags(45);
    const late = await tags(4);
    const [mine] = await tags(1);
    const target = await schema({ tagIds: base });
    const blocker = new pg.Client({ connectionString: process.env.DATABASE_URL });
    const watcher = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await Promise.all([blocker.connect(), watcher.connect()]);
    try {
      // Another writer holds the entity and adds links: the batch must count them once it gets the entity.
      await blocker.query('begin');
      await blocker.query('select 1 from schema where schema_id = $1 for update', [target]);
      await blocker.query(
        `insert into entity_tag (entity_type, entity_id, tag_id) select 'schema', $1, unnest($2::varchar[])`,
        [target, late],
      );
      const pending = batch([add(target, [mine])]);
      const batchWaits = async (): Promise<boolean> => {
        const { rows } = await watcher.query<{ n: number }>(
          `select count(*)::int as n from pg_stat_activity
           where datname = current_database() and wait_event_type = 'Lock' and query like '%for update of e%'`,
        );
        return (rows[0]?.n ?? 0) > 0;
      };
      await waitFor(batchWaits, 'the batch waiting for the entity', 10_000, 25);
      await blocker.query(`insert into entity_tag (entity_type, entity_id, tag_id) select 'schema', $1, $2`, [
        target,
        (await tags(1))[0],
      ]);
      await blocker.query('commit');
      const results = resultsOf(await pending);
      expect(results[0]).toEqual({
        index: 0,
        status: 400,
        detail: `schema ${target} would have 51 tags; at most 50 are allowed`,
      });
      expect(await linksOf(target)).toHaveLength(50);
    } finally {
      await blocker.query('rollback').catch(() => undefined);
      await Promise.all([blocker.end(), watcher.end()]);
    }
  }, 30_000);

  it('holds the cap with a batch and a single PUT of the tags racing on one entity', async () => {
    for (let round = 0; round < 5; round++) {
      const base = await tags(45);
      const [viaBatch, viaPut] = [await tags(5), await tags(5)];
      const target = await schema({ tagIds: base });
      const others = await Promise.all(Array.from({ length: 20 }, () => schema()));
      const [res, put] = await Promise.all([
        batch([...others.map((id) => add(id, [viaBatch[0]])), add(target, viaBatch)]),
        call(api, 'PUT', `/schemas/${target}/tags`, { token: admin, body: { tagIds: [...base, ...viaPut] } }),
      ]);
      expect(put.statusCode).toBe(200);
      const status = resultsOf(res).at(-1)?.status;
      // Either order is fine; what the batch saw must be what was there: 55 links never fit.
      const events = await eventsOf(target);
      const batchFirst = events.findIndex((e) => e.type === 'entity.tagged' && e.tagIds.includes(viaBatch[0]));
      expect(status).toBe(batchFirst === -1 ? 400 : 200);
      expect(await linksOf(target)).toEqual([...base, ...viaPut].sort());
    }
  }, 60_000);

  it('never deadlocks with batches in other orders, single writes and tag deletions on the same entities', async () => {
    const [t1, t2] = await tags(2);
    const doomed = await tags(3);
    const entities = await Promise.all(Array.from({ length: 30 }, () => schema({ tagIds: doomed })));
    const reversed = [...entities].reverse();
    const responses = await Promise.all([
      batch(entities.map((id) => add(id, [t1]))),
      batch(reversed.map((id) => add(id, [t2]))),
      batch(entities.map((id, i) => (i % 2 === 0 ? remove(id, [t1]) : add(id, [t2])))),
      batch(
        reversed.map((id) => add(id, [t1, t2])),
        admin,
        '?atomic=true',
      ),
      ...doomed.map((tagId) => call(api, 'DELETE', `/tags/${tagId}`, { token: admin })),
      ...entities
        .slice(0, 6)
        .map((id) => call(api, 'PUT', `/schemas/${id}/tags`, { token: admin, body: { tagIds: [t2] } })),
    ]);
    expect(responses.map((res) => res.statusCode)).toEqual([
      200,
      200,
      200,
      200,
      ...doomed.map(() => 204),
      ...entities.slice(0, 6).map(() => 200),
    ]);
    for (const res of responses.slice(0, 4)) expect(resultsOf(res).every((r) => r.status === 200)).toBe(true);
    for (const id of entities) {
      const links = await linksOf(id);
      expect(links.filter((t) => doomed.includes(t))).toEqual([]);
    }
  }, 60_000);

  it('sends as many statements for 400 operations as for 4', async () => {
    const [t1, t2] = await tags(2);
    const few = await Promise.all(Array.from({ length: 4 }, () => schema()));
    const ids = Array.from({ length: 400 }, () => newId('bq'));
    await db.query(
      `insert into schema (schema_id, schema_name, update_user) select id, 'q', 'test' from unnest($1::varchar[]) id`,
      [ids],
    );
    const small = await sqlDuring(() => batch(few.map((id, i) => (i % 2 ? add(id, [t1]) : add(id, [t1, t2])))));
    const large = await sqlDuring(() => batch(ids.map((id, i) => (i % 2 ? add(id, [t1]) : add(id, [t1, t2])))));
    expect(resultsOf(large.result).every((r) => r.status === 200)).toBe(true);
    expect(large.queries).toBe(small.queries);
    // BEGIN, tags, entities, links, the link and version writes, the events, COMMIT; behind a transaction
    // pooler also the transaction's TimeZone and statement_timeout (DESIGN 15).
    expect(large.queries).toBe(process.env.DATABASE_POOL_MODE === 'transaction' ? 8 : 7);
    expect(await linksOf(ids[0] ?? '')).toEqual([t1, t2].sort());
  }, 30_000);
});
