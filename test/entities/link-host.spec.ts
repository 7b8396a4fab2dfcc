import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, startApi, unique, type TestApi } from '../support/api.js';
import { callers, token } from '../support/tokens.js';
import {
  As,
  createTags,
  dataSource,
  ENTITY_CASES,
  expectProblem,
  linksInDb,
  type EntityCase,
  type Json,
} from './support.js';

/**
 * DESIGN 12 and 16: an entity is linked only to tags its own host can see (an entity of host X: global tags
 * and X's; a global entity: global tags only). Every link write refuses another tag with 400 naming the ids
 * the caller sent, as for unknown ids (DESIGN 5.2), and writes nothing; in a batch that operation is 400.
 */
let api: TestApi;
let admin: As;
/** A host-bound admin: it writes global entities and tags, and sees its own host's tags besides. */
let admin1: As;
let admin1Token: string;
const H1 = unique('h1');
const H2 = unique('h2');
let g: string;
let t1: string;
let t2: string;

beforeAll(async () => {
  api = await startApi();
  admin = new As(api, await callers.admin());
  admin1Token = await token({ sub: 'admin-h1', scope: 'portal.admin', host: H1 });
  admin1 = new As(api, admin1Token);
  [g] = await createTags(api, [unique('g')]);
  [t1] = await createTags(api, [unique('t1')], H1);
  [t2] = await createTags(api, [unique('t2')], H2);
});
afterAll(() => api.close());

/** The 400 of a refused link write: problem+json naming exactly `hidden`, in field errors too. */
function expectHidden(res: Parameters<typeof expectProblem>[0], hidden: readonly string[]): Json {
  const body = expectProblem(res, 400);
  for (const tagId of hidden) expect(body.detail).toContain(tagId);
  expect(body.errors).toEqual(hidden.map((tagId) => ({ field: 'tagIds', message: expect.stringContaining(tagId) })));
  return body;
}

describe.each(ENTITY_CASES)('link writes of /$path', (c: EntityCase) => {
  const url = (id: string, sub = ''): string => `/${c.path}/${id}${sub}`;

  /** The row, its links and the events that mention it: what a refused write must leave as it was. */
  async function state(id: string): Promise<Json> {
    const db = dataSource(api);
    const rows = await db.query<Json[]>(`select * from ${c.table} where ${c.table}_id = $1`, [id]);
    const links = await db.query<Json[]>(
      'select tag_id, entity_host_id from entity_tag where entity_type = $1 and entity_id = $2 order by tag_id',
      [c.entityType, id],
    );
    const [events] = await db.query<{ n: number }[]>(
      `select count(*)::int as n from change_event where data->>'entityId' = $1 or data->>$2 = $1`,
      [id, c.idField],
    );
    return { rows, links, events: events?.n };
  }

  async function entityOf(as: As, hostId: string | null, tagIds: string[]): Promise<string> {
    const res = await as.post(`/${c.path}`, { ...c.fields, hostId, tagIds });
    expect(res.statusCode).toBe(201);
    return res.json<Json>()[c.idField] as string;
  }

  it("POST refuses a tag the new entity's host cannot see: 400, no entity, no link, no event", async () => {
    // The audit's case: a host-1 admin makes a global entity carrying its host's private tag.
    const cases: [As, string | null, string[], string[]][] = [
      [admin1, null, [g, t1], [t1]],
      [admin, null, [t1, t2, g], [t1, t2].sort()],
      [admin, H1, [g, t2], [t2]],
    ];
    for (const [as, hostId, tagIds, hidden] of cases) {
      const id = unique('lh').replace(/-/g, '');
      const res = await as.post(`/${c.path}`, { ...c.fields, [c.idField]: id, hostId, tagIds });
      expectHidden(res, hidden);
      expect(await state(id)).toEqual({ rows: [], links: [], events: 0 });
    }
    // What each host sees is linked as before.
    expect((await admin1.post(`/${c.path}`, { ...c.fields, hostId: null, tagIds: [g] })).statusCode).toBe(201);
    expect((await admin1.post(`/${c.path}`, { ...c.fields, hostId: H1, tagIds: [g, t1] })).statusCode).toBe(201);
  });

  it('PUT with tagIds and PUT .../tags refuse such a tag (400) and change nothing', async () => {
    const global = await entityOf(admin, null, [g]);
    const mine = await entityOf(admin, H1, [g, t1]);
    for (const [id, hostId, tagIds, hidden] of [
      [global, null, [g, t1], [t1]],
      [mine, H1, [t1, t2], [t2]],
    ] as const) {
      const before = await state(id);
      expectHidden(await admin.put(url(id), { ...c.fields, hostId, tagIds }), hidden);
      expectHidden(await admin.put(url(id, '/tags'), { tagIds }), hidden);
      expect(await state(id)).toEqual(before);
    }
    // The host-1 admin may write the global entity, but not link it to host 1's tag.
    const before = await state(global);
    expectHidden(await admin1.put(url(global, '/tags'), { tagIds: [t1] }), [t1]);
    expectHidden(await admin1.put(url(global), { ...c.fields, tagIds: [t1] }), [t1]);
    expect(await state(global)).toEqual(before);
    expect((await admin1.put(url(mine, '/tags'), { tagIds: [t1] })).statusCode).toBe(200);
  });

  it('a batch refuses adding such a tag in that operation (400); the others apply; atomic writes nothing', async () => {
    const global = await entityOf(admin, null, []);
    const mine = await entityOf(admin, H1, []);
    const operations = [
      { op: 'add', entityType: c.entityType, entityId: global, tagIds: [g, t1] },
      { op: 'add', entityType: c.entityType, entityId: mine, tagIds: [t1] },
      { op: 'add', entityType: c.entityType, entityId: global, tagIds: [g] },
    ];
    const before = await state(global);
    const atomic = await call(api, 'POST', '/tags/batch?atomic=true', { token: admin1Token, body: { operations } });
    expect(atomic.statusCode).toBe(409);
    expect(atomic.json<Json>().detail).toMatch(/^operation 0 failed \(400\)/);
    expect(await state(global)).toEqual(before);
    const res = await call(api, 'POST', '/tags/batch', { token: admin1Token, body: { operations } });
    expect(res.statusCode).toBe(200);
    const results = res.json<{ results: { index: number; status: number; detail?: string }[] }>().results;
    expect(results.map((r) => r.status)).toEqual([400, 200, 200]);
    expect(results[0]?.detail).toContain(t1);
    expect(await linksInDb(api, c.entityType, global)).toEqual([g]);
    expect(await linksInDb(api, c.entityType, mine)).toEqual([t1]);
  });
});
