import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { DataSource } from 'typeorm';
import { call, startApi, unique, type TestApi } from '../support/api.js';
import { assertProperty } from '../support/property.js';
import { callers } from '../support/tokens.js';

/**
 * The usage counters (`tag_usage`, migration TagUsage) always equal the links they count: after any mix of
 * concurrent tagging through the api (PUT of an entity's tags, batches, an entity moving host, an entity or a
 * tag deleted and made again with the same id), each tag's counters per entity type and host sum to exactly
 * what counting `entity_tag` gives, and a deleted tag leaves no counter behind for its id's next owner.
 */
const TYPES = [
  { type: 'schema', path: 'schemas', id: 'schemaId', name: 'schemaName' },
  { type: 'product', path: 'products', id: 'productId', name: 'productName' },
  { type: 'document', path: 'documents', id: 'documentId', name: 'title' },
] as const;
const ENTITIES_PER_TYPE = 3;
const TAGS = 4;

let api: TestApi;
let db: DataSource;
let admin: string;
const run = unique('uc').replace(/-/g, '').slice(0, 8);
const hosts = [null, `${run}ha`, `${run}hb`] as const;
const tagIds = Array.from({ length: TAGS }, (_, i) => `${run}t${i}`);
const entityId = (t: number, e: number): string => `${run}e${t}${e}`;

const body = (t: number, e: number, host: string | null) => ({
  [TYPES[t].name]: `n-${t}-${e}`,
  ...(host === null ? {} : { hostId: host }),
});

async function expectStatus(res: Promise<{ statusCode: number; body: string }>, ...ok: number[]): Promise<void> {
  const answer = await res;
  if (!ok.includes(answer.statusCode)) throw new Error(`status ${answer.statusCode}: ${answer.body}`);
}

const makeTag = (i: number) =>
  expectStatus(call(api, 'POST', '/tags', { token: admin, body: { tagId: tagIds[i], tagName: `${run}-${i}` } }), 201);

beforeAll(async () => {
  api = await startApi();
  db = api.app.get(DataSource);
  admin = await callers.admin();
  for (let i = 0; i < TAGS; i++) await makeTag(i);
  for (let t = 0; t < TYPES.length; t++) {
    for (let e = 0; e < ENTITIES_PER_TYPE; e++) {
      const { path, id } = TYPES[t];
      const created = { [id]: entityId(t, e), ...body(t, e, hosts[e % hosts.length]) };
      await expectStatus(call(api, 'POST', `/${path}`, { token: admin, body: created }), 201);
    }
  }
});
afterAll(() => api.close());

const entity = fc.record({ t: fc.nat(TYPES.length - 1), e: fc.nat(ENTITIES_PER_TYPE - 1) });
const someTags = fc.subarray([...tagIds.keys()]);
const operation = fc.oneof(
  fc.record({ op: fc.constant('put' as const), at: entity, tags: someTags }),
  fc.record({
    op: fc.constant('batch' as const),
    items: fc.array(fc.record({ add: fc.boolean(), at: entity, tags: someTags }), { minLength: 1, maxLength: 4 }),
  }),
  fc.record({ op: fc.constant('move' as const), at: entity, host: fc.nat(hosts.length - 1) }),
  fc.record({ op: fc.constant('recreateEntity' as const), at: entity }),
  fc.record({ op: fc.constant('recreateTag' as const), tag: fc.nat(TAGS - 1) }),
);
type Operation = typeof operation extends fc.Arbitrary<infer T> ? T : never;

/** Runs one operation; a refusal that concurrency explains (a tag or entity gone meanwhile) is fine. */
async function apply(o: Operation): Promise<void> {
  const path = (t: number, e: number) => `/${TYPES[t].path}/${entityId(t, e)}`;
  switch (o.op) {
    case 'put':
      return expectStatus(
        call(api, 'PUT', `${path(o.at.t, o.at.e)}/tags`, {
          token: admin,
          body: { tagIds: o.tags.map((i) => tagIds[i]) },
        }),
        200,
        400,
        404,
      );
    case 'batch': {
      const operations = o.items.map((item) => ({
        op: item.add ? 'add' : 'remove',
        entityType: TYPES[item.at.t].type,
        entityId: entityId(item.at.t, item.at.e),
        tagIds: item.tags.length === 0 ? [tagIds[0]] : item.tags.map((i) => tagIds[i]),
      }));
      return expectStatus(call(api, 'POST', '/tags/batch', { token: admin, body: { operations } }), 200);
    }
    case 'move':
      return expectStatus(
        call(api, 'PUT', path(o.at.t, o.at.e), { token: admin, body: body(o.at.t, o.at.e, hosts[o.host]) }),
        200,
        404,
      );
    case 'recreateEntity': {
      await expectStatus(call(api, 'DELETE', path(o.at.t, o.at.e), { token: admin }), 204, 404);
      const { path: p, id } = TYPES[o.at.t];
      const created = { [id]: entityId(o.at.t, o.at.e), ...body(o.at.t, o.at.e, null) };
      return expectStatus(call(api, 'POST', `/${p}`, { token: admin, body: created }), 201, 409);
    }
    case 'recreateTag': {
      await expectStatus(call(api, 'DELETE', `/tags/${tagIds[o.tag]}`, { token: admin }), 204, 404);
      const [left] = await db.query<[{ n: number }]>('select count(*)::int as n from tag_usage where tag_id = $1', [
        tagIds[o.tag],
      ]);
      // Nothing links a deleted tag: its counters went with it (unless it was made again meanwhile).
      const [exists] = await db.query<[{ n: number }]>('select count(*)::int as n from tag where tag_id = $1', [
        tagIds[o.tag],
      ]);
      if (exists.n === 0) expect(left.n).toBe(0);
      return expectStatus(
        call(api, 'POST', '/tags', { token: admin, body: { tagId: tagIds[o.tag], tagName: `${run}-${o.tag}` } }),
        201,
        409,
      );
    }
  }
}

/** Counters summed, and links counted, per tag, type and host ('' for none), for this file's tags. */
async function countsBothWays(): Promise<{ counted: string[]; linked: string[] }> {
  const counted = await db.query<{ k: string }[]>(
    `select tag_id || '/' || entity_type || '/' || host_key || '=' || sum(links) as k from tag_usage
      where tag_id = any($1) group by tag_id, entity_type, host_key having sum(links) <> 0 order by 1`,
    [tagIds],
  );
  const linked = await db.query<{ k: string }[]>(
    `select tag_id || '/' || entity_type || '/' || coalesce(entity_host_id, '') || '=' || count(*) as k
      from entity_tag where tag_id = any($1) group by tag_id, entity_type, coalesce(entity_host_id, '') order by 1`,
    [tagIds],
  );
  return { counted: counted.map((r) => r.k), linked: linked.map((r) => r.k) };
}

describe('tag usage counters', () => {
  it('equal the links after any concurrent mix of tagging, moves and deletions (property)', async () => {
    await assertProperty(
      'usage counters',
      fc.asyncProperty(
        fc.array(fc.array(operation, { minLength: 1, maxLength: 4 }), { maxLength: 4 }),
        async (rounds) => {
          // Each round's operations run at once: their counter updates meet on the same tags and shards.
          for (const round of rounds) await Promise.all(round.map(apply));
          const { counted, linked } = await countsBothWays();
          expect(counted).toEqual(linked);
        },
      ),
      12,
    );
  }, 300_000);

  it('is not vacuous: links written around the triggers show up as a difference', async () => {
    await expectStatus(call(api, 'PUT', `/schemas/${entityId(0, 0)}/tags`, { token: admin, body: { tagIds } }), 200);
    expect((await countsBothWays()).counted).toEqual((await countsBothWays()).linked);
    await db.transaction(async (tx) => {
      await tx.query('set local session_replication_role = replica');
      await tx.query('delete from entity_tag where entity_id = $1 and tag_id = $2', [entityId(0, 0), tagIds[0]]);
    });
    const { counted, linked } = await countsBothWays();
    expect(counted).not.toEqual(linked);
  });
});
