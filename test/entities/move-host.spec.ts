import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startApi, unique, type TestApi } from '../support/api.js';
import { callers, token } from '../support/tokens.js';
import {
  As,
  createTags,
  dataSource,
  ENTITY_CASES,
  expectProblem,
  linkInDb,
  linksInDb,
  type EntityCase,
  type Json,
} from './support.js';

/**
 * DESIGN 12: moving an entity to another host (PUT changing hostId) while it is linked to tags that host
 * cannot see is 409 naming those tags, and nothing changes. A PUT that moves and gives tagIds is judged on
 * the new links.
 */
let api: TestApi;
let admin: As;
const H1 = unique('h1');
const H2 = unique('h2');

beforeAll(async () => {
  api = await startApi();
  admin = new As(api, await callers.admin());
});
afterAll(() => api.close());

describe.each(ENTITY_CASES)('PUT /$path/{id} changing hostId', (c: EntityCase) => {
  const url = (id: string): string => `/${c.path}/${id}`;

  /** Everything a refused move must leave as it was: the row, its links (with their host) and the feed. */
  async function state(id: string): Promise<Json> {
    const db = dataSource(api);
    const [row] = await db.query<Json[]>(`select * from ${c.table} where ${c.table}_id = $1`, [id]);
    const links = await db.query<Json[]>(
      'select tag_id, entity_host_id from entity_tag where entity_type = $1 and entity_id = $2 order by tag_id',
      [c.entityType, id],
    );
    const [events] = await db.query<{ n: number }[]>(
      `select count(*)::int as n from change_event where data->>'entityId' = $1 or data->>$2 = $1`,
      [id, c.idField],
    );
    return { row, links, events: events?.n };
  }

  async function entityOf(hostId: string | null, tagIds: string[]): Promise<string> {
    const res = await admin.post(`/${c.path}`, { ...c.fields, hostId, tagIds });
    expect(res.statusCode).toBe(201);
    return res.json<Json>()[c.idField] as string;
  }

  it('is 409 naming the tags the new host cannot see, and changes nothing (row, links, feed)', async () => {
    const [g] = await createTags(api, [unique('g')]);
    const [t1, t1b] = await createTags(api, [unique('t1'), unique('t1b')], H1);
    const id = await entityOf(H1, [g, t1, t1b]);
    const before = await state(id);
    for (const hostId of [H2, null]) {
      const body = expectProblem(await admin.put(url(id), { ...c.fields, hostId }), 409);
      const hidden = [t1, t1b].sort();
      for (const tagId of hidden) expect(body.detail).toContain(tagId);
      expect(body.detail).not.toContain(g);
      expect(body.errors).toEqual(
        hidden.map((tagId) => ({ field: 'tagIds', message: expect.stringContaining(tagId) })),
      );
      expect(await state(id)).toEqual(before);
    }
    const read = await admin.get(url(id));
    expect(read.headers.etag).toBe('W/"1"');
    expect(read.json<Json>()).toMatchObject({ hostId: H1, tagIds: [g, t1, t1b].sort() });
  });

  it('moves when the new host sees every linked tag; the links follow the entity', async () => {
    const [g] = await createTags(api, [unique('g')]);
    const [t2] = await createTags(api, [unique('t2')], H2);
    const id = await entityOf(H1, [g]);
    // Linked to host 2's tag before link writes checked the entity's host: moving there is allowed.
    await linkInDb(api, c.entityType, id, H1, [t2]);
    const res = await admin.put(url(id), { ...c.fields, hostId: H2 });
    expect(res.statusCode).toBe(200);
    expect(res.json<Json>()).toMatchObject({ hostId: H2, aggregateVersion: 2, tagIds: [g, t2].sort() });
    expect((await state(id)).links).toEqual([g, t2].sort().map((tagId) => ({ tag_id: tagId, entity_host_id: H2 })));
  });

  it('a move that gives tagIds is judged on the new links: allowed without the hidden tags, 409 with them, 400 for unknown ids', async () => {
    const [g] = await createTags(api, [unique('g')]);
    const [t1] = await createTags(api, [unique('t1')], H1);
    const [t2] = await createTags(api, [unique('t2')], H2);
    const kept = await entityOf(H1, [g, t1]);
    const before = await state(kept);
    // New links the new host cannot see: 409 naming them, although the current ones would do as well.
    const conflict = expectProblem(await admin.put(url(kept), { ...c.fields, hostId: H2, tagIds: [g, t1, t2] }), 409);
    expect(conflict.errors).toEqual([{ field: 'tagIds', message: expect.stringContaining(t1) }]);
    // Unknown ids are the usual 400, before any judgement of the move.
    const missing = unique('nope');
    const bad = expectProblem(await admin.put(url(kept), { ...c.fields, hostId: H2, tagIds: [g, missing] }), 400);
    expect(bad.errors).toEqual([{ field: 'tagIds', message: expect.stringContaining(missing) }]);
    expect(await state(kept)).toEqual(before);
    // Replacing the hidden link in the same PUT: the move goes through.
    const moved = await admin.put(url(kept), { ...c.fields, hostId: H2, tagIds: [g, t2] });
    expect(moved.statusCode).toBe(200);
    expect(moved.json<Json>()).toMatchObject({ hostId: H2, tagIds: [g, t2].sort(), aggregateVersion: 2 });
    expect(await linksInDb(api, c.entityType, kept)).toEqual([g, t2].sort());
    expect((await state(kept)).links).toEqual([g, t2].sort().map((tagId) => ({ tag_id: tagId, entity_host_id: H2 })));
  });

  it("names only the tags the caller can see: links made before the link rule may reach another host's", async () => {
    const admin1 = new As(api, await token({ sub: 'admin-h1', scope: 'portal.admin', host: H1 }));
    const [t1] = await createTags(api, [unique('t1')], H1);
    const [t2] = await createTags(api, [unique('t2')], H2);
    const id = await entityOf(H1, [t1]);
    await linkInDb(api, c.entityType, id, H1, [t2]);
    const hiddenToo = await entityOf(H1, []);
    await linkInDb(api, c.entityType, hiddenToo, H1, [t2]);
    const before = [await state(id), await state(hiddenToo)];
    const named = expectProblem(await admin1.put(url(id), { ...c.fields, hostId: null }), 409);
    expect(named.detail).toContain(t1);
    expect(named.errors).toEqual([{ field: 'tagIds', message: expect.stringContaining(t1) }]);
    const unnamed = expectProblem(await admin1.put(url(hiddenToo), { ...c.fields, hostId: null }), 409);
    expect(unnamed.errors).toEqual([{ field: 'hostId', message: expect.any(String) }]);
    for (const body of [named, unnamed]) expect(JSON.stringify(body)).not.toContain(t2);
    expect([await state(id), await state(hiddenToo)]).toEqual(before);
    // A global admin sees every tag, so it is told them all.
    const all = expectProblem(await admin.put(url(id), { ...c.fields, hostId: null }), 409);
    for (const tagId of [t1, t2]) expect(all.detail).toContain(tagId);
  });

  it('a PUT that keeps the host is not judged on the links', async () => {
    const [t2] = await createTags(api, [unique('t2')], H2);
    const id = await entityOf(H1, []);
    await linkInDb(api, c.entityType, id, H1, [t2]);
    const res = await admin.put(url(id), { ...c.fields, [c.nameField]: 'renamed', hostId: H1 });
    expect(res.statusCode).toBe(200);
  });
});
