import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { call, startApi, unique, type TestApi } from '../support/api.js';
import { callers, token } from '../support/tokens.js';
import { LockHolder } from '../support/locks.js';
import { waitFor, withTimeout } from '../support/wait.js';
import { createSchema, newId } from './batch-support.js';

/**
 * DESIGN 12 and 16 from the tag's side: an entity is linked only to tags its host sees, and a host-bound token
 * writes only its host's data (and global data). Deleting a tag that entities of other hosts carry is 403
 * unless the caller is a global admin; moving a tag to a host some of its entities cannot see is 409 for
 * anyone; both are decided with the tag and the entities locked, so an entity moving meanwhile is seen. A
 * batch locks only the entities the caller can see, so naming another host's never waits for it.
 */
let api: TestApi;
let db: DataSource;
let admin: string;
const H1 = unique('h1');
const H2 = unique('h2');
/** Host-bound admins of host 1: through the broad scope, and through the capability. */
let admins1: string[];

type Json = Record<string, unknown>;

beforeAll(async () => {
  api = await startApi();
  db = api.app.get(DataSource);
  admin = await callers.admin();
  admins1 = [
    await token({ sub: 'admin-h1', scope: 'portal.admin', host: H1 }),
    await token({ sub: 'tags-admin-h1', scope: 'tags:admin', host: H1 }),
  ];
});
afterAll(() => api.close());

async function tag(hostId: string | null = null): Promise<string> {
  const res = await call(api, 'POST', '/tags', { token: admin, body: { tagName: unique('hl'), hostId } });
  expect(res.statusCode).toBe(201);
  return res.json<{ tagId: string }>().tagId;
}

const schema = (hostId: string | null, tagIds: string[]): Promise<string> =>
  createSchema(api, admin, { hostId, tagIds });

/** The tag, the schemas, the tag's links and every event naming any of them: what a refusal leaves as it was. */
async function state(tagId: string, schemaIds: readonly string[]): Promise<Json> {
  const [tagRow] = await db.query<Json[]>('select * from tag where tag_id = $1', [tagId]);
  const schemas = await db.query<Json[]>('select * from schema where schema_id = any($1) order by schema_id', [
    schemaIds,
  ]);
  const links = await db.query<Json[]>(
    'select entity_type, entity_id, entity_host_id from entity_tag where tag_id = $1 order by entity_id',
    [tagId],
  );
  const [events] = await db.query<{ n: number }[]>(
    `select count(*)::int as n from change_event
     where exists (select 1 from unnest($1::text[]) id where position(id in data::text) > 0)`,
    [[tagId, ...schemaIds]],
  );
  return { tag: tagRow, schemas, links, events: events?.n };
}

/** A problem+json refusal with this status that names nothing of `hidden`. */
function expectRefusal(res: Awaited<ReturnType<typeof call>>, status: number, hidden: readonly string[]): Json {
  expect(res.statusCode).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  for (const value of hidden) expect(res.body).not.toContain(value);
  return res.json<Json>();
}

/**
 * Runs `request` while another transaction moves `schemaId` to `hostId` (as PUT /schemas would: the row and its
 * links), and commits that move once `request` waits for the schema's lock: `request` then sees the schema where
 * it is now. Answers `request`'s answer.
 */
async function whileMoving<T>(schemaId: string, hostId: string, request: () => Promise<T>): Promise<T> {
  const mover = new pg.Client({ connectionString: process.env.DATABASE_URL });
  const watcher = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await Promise.all([mover.connect(), watcher.connect()]);
  try {
    await mover.query('begin');
    await mover.query(
      'update schema set host_id = $2, aggregate_version = aggregate_version + 1 where schema_id = $1',
      [schemaId, hostId],
    );
    await mover.query(`update entity_tag set entity_host_id = $2 where entity_type = 'schema' and entity_id = $1`, [
      schemaId,
      hostId,
    ]);
    const answer = request();
    await waitFor(async () => {
      const { rows } = await watcher.query<{ n: number }>(
        `select count(*)::int as n from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock' and query like '%for update of e%'`,
      );
      return (rows[0]?.n ?? 0) > 0;
    }, 'the request waiting for the moving schema');
    await mover.query('commit');
    return await withTimeout(answer, 'the request after the move');
  } finally {
    await mover.query('rollback').catch(() => undefined);
    await Promise.all([mover.end(), watcher.end()]);
  }
}

describe('DELETE /tags/{tagId} of a tag that entities of other hosts carry', () => {
  it('is 403 for a host-bound admin, naming none of them, and changes nothing; a global admin deletes it', async () => {
    const g = await tag();
    const theirs = await schema(H2, [g]);
    const mine = await schema(H1, [g]);
    const global = await schema(null, [g]);
    const before = await state(g, [theirs, mine, global]);
    for (const bearer of admins1) {
      const res = await call(api, 'DELETE', `/tags/${g}`, { token: bearer });
      const body = expectRefusal(res, 403, [theirs, H2]);
      expect(body.detail).toBe(
        `Deleting tag ${g} would untag entities of other hosts: that needs tags:admin without a host claim`,
      );
      expect(await state(g, [theirs, mine, global])).toEqual(before);
    }
    expect((await call(api, 'DELETE', `/tags/${g}`, { token: admin })).statusCode).toBe(204);
    const [row] = await db.query<{ v: number }[]>('select aggregate_version as v from schema where schema_id = $1', [
      theirs,
    ]);
    expect(row?.v).toBe(2);
  });

  it("is allowed to a host-bound admin when only global entities and its own host's carry the tag", async () => {
    const g = await tag();
    const mine = await schema(H1, [g]);
    const global = await schema(null, [g]);
    expect((await call(api, 'DELETE', `/tags/${g}`, { token: admins1[0] })).statusCode).toBe(204);
    const rows = await db.query<{ v: number; u: string }[]>(
      'select aggregate_version as v, update_user as u from schema where schema_id = any($1)',
      [[mine, global]],
    );
    expect(rows).toEqual([
      { v: 2, u: 'admin-h1' },
      { v: 2, u: 'admin-h1' },
    ]);
  });

  it('is decided with the entities locked: one moving to another host meanwhile makes it 403', async () => {
    const g = await tag();
    const moving = await schema(H1, [g]);
    const res = await whileMoving(moving, H2, () => call(api, 'DELETE', `/tags/${g}`, { token: admins1[0] }));
    expectRefusal(res, 403, [moving, H2]);
    // The move committed; the deletion wrote nothing.
    expect(await state(g, [moving])).toMatchObject({
      tag: { tag_id: g },
      schemas: [{ host_id: H2, aggregate_version: 2 }],
      links: [{ entity_type: 'schema', entity_id: moving, entity_host_id: H2 }],
    });
  });
});

describe('PUT /tags/{tagId} moving a tag to another host', () => {
  it('is 409 for any caller when entities that host cannot see carry it, and changes nothing', async () => {
    const g = await tag();
    const theirs = await schema(H2, [g]);
    const mine = await schema(H1, [g]);
    const before = await state(g, [theirs, mine]);
    for (const bearer of [admin, ...admins1]) {
      const res = await call(api, 'PUT', `/tags/${g}`, { token: bearer, body: { tagName: unique('m'), hostId: H1 } });
      const body = expectRefusal(res, 409, [theirs, mine, H2]);
      expect(body.detail).toBe(`Tag ${g} is linked to entities that host ${H1} cannot see; unlink them first`);
      expect(await state(g, [theirs, mine])).toEqual(before);
    }
    // A global entity sees global tags only; host 1's entities do not see host 2's tags.
    const globalOnly = await tag();
    const global = await schema(null, [globalOnly]);
    const res = await call(api, 'PUT', `/tags/${globalOnly}`, { token: admin, body: { tagName: 'x', hostId: H1 } });
    expectRefusal(res, 409, [global]);
    const t1 = await tag(H1);
    await schema(H1, [t1]);
    const away = await call(api, 'PUT', `/tags/${t1}`, { token: admin, body: { tagName: unique('m'), hostId: H2 } });
    expectRefusal(away, 409, []);
  });

  it('moves when every entity carrying it is of the new host, and to global always', async () => {
    const g = await tag();
    await schema(H1, [g]);
    const res = await call(api, 'PUT', `/tags/${g}`, { token: admins1[1], body: { tagName: unique('m'), hostId: H1 } });
    expect(res.statusCode).toBe(200);
    expect(res.json<Json>()).toMatchObject({ hostId: H1, aggregateVersion: 2 });
    const back = await call(api, 'PUT', `/tags/${g}`, { token: admin, body: { tagName: unique('m'), hostId: null } });
    expect(back.statusCode).toBe(200);
  });

  it('is decided with the entities locked: one moving to another host meanwhile makes it 409', async () => {
    const g = await tag();
    const moving = await schema(H1, [g]);
    const body = { tagName: unique('m'), hostId: H1 };
    const res = await whileMoving(moving, H2, () => call(api, 'PUT', `/tags/${g}`, { token: admin, body }));
    expectRefusal(res, 409, [moving]);
    expect(await state(g, [moving])).toMatchObject({ tag: { host_id: null, aggregate_version: 1 } });
  });
});

describe("a host-1 write naming host 2's tag or entity", () => {
  // Each answers 404 like a missing id while host 2's row is locked elsewhere: it neither waits for it nor holds it.
  it('POST /tags/batch does not wait for the entity and answers 404 like a missing one', async () => {
    const g = await tag();
    const theirs = await schema(H2, []);
    const missing = newId('none');
    const holder = await LockHolder.lock('select 1 from schema where schema_id = $1 for update', [theirs]);
    try {
      const operations = [theirs, missing].map((entityId) => ({
        op: 'add',
        entityType: 'schema',
        entityId,
        tagIds: [g],
      }));
      const res = await holder.answeredWithoutWaiting(
        call(api, 'POST', '/tags/batch', { token: await callers.writer(H1), body: { operations } }),
      );
      expect(res.statusCode).toBe(200);
      expect(res.json<Json>()).toEqual({
        results: [
          { index: 0, status: 404, detail: `No schema with schemaId ${theirs}` },
          { index: 1, status: 404, detail: `No schema with schemaId ${missing}` },
        ],
      });
    } finally {
      await holder.release();
    }
    const links = await db.query('select 1 from entity_tag where tag_id = $1', [g]);
    expect(links).toEqual([]);
  });

  it.each([
    ['PUT /schemas/{id}/tags', 'schema'],
    ['DELETE /schemas/{id}', 'schema'],
    ['PUT /tags/{id}', 'tag'],
    ['DELETE /tags/{id}', 'tag'],
  ])('%s does not wait for the row and answers 404', async (route, kind) => {
    const id = kind === 'tag' ? await tag(H2) : await schema(H2, []);
    const lockSql =
      kind === 'tag'
        ? 'select 1 from tag where tag_id = $1 for update'
        : 'select 1 from schema where schema_id = $1 for update';
    const [method, template] = route.split(' ') as ['PUT' | 'DELETE', string];
    const url = template.replace('{id}', id);
    const body = route === 'PUT /tags/{id}' ? { tagName: unique('x'), hostId: H1 } : { tagIds: [] };
    const holder = await LockHolder.lock(lockSql, [id]);
    try {
      const res = await holder.answeredWithoutWaiting(
        call(api, method, url, { token: admins1[0], ...(method === 'PUT' ? { body } : {}) }),
      );
      expect(res.statusCode).toBe(404);
    } finally {
      await holder.release();
    }
  });
});
