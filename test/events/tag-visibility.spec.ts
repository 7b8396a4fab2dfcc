import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sqlDuring, startApi, unique, type TestApi } from '../support/api.js';
import { callers, token } from '../support/tokens.js';
import { As, createTags, linkInDb, type Json } from '../entities/support.js';
import { about, feed, readAll, tail, type FeedEvent } from './feed.js';

/**
 * DESIGN 12: an event shows a reader only the tag ids that reader can see, filtered when read as GET does
 * (DESIGN 4.3): a host token sees global tags and its own host's, an admin all, a token with neither host
 * nor admin global tags only.
 */
let api: TestApi;
let admin: string;
let asAdmin: As;
const H1 = unique('h1');
const H2 = unique('h2');
let reader1: string;
let reader2: string;
let hostless: string;

beforeAll(async () => {
  api = await startApi();
  admin = await callers.admin();
  asAdmin = new As(api, admin);
  reader1 = await callers.reader(H1);
  reader2 = await callers.reader(H2);
  hostless = await token({ sub: 'nobody', scope: 'portal.r' });
});
afterAll(() => api.close());

/** The tag ids of each event about `entityId`, by type, as `as` reads the feed from `after`. */
async function tagIdsSeen(as: string, after: number, entityId: string): Promise<Record<string, unknown>[]> {
  const events = about(await readAll(api, as, after), entityId);
  return events.map((e: FeedEvent) => ({ type: e.type, tagIds: e.data.tagIds }));
}

async function createSchema(body: Json): Promise<string> {
  const res = await asAdmin.post('/schemas', { schemaName: 'visibility', ...body });
  expect(res.statusCode).toBe(201);
  return res.json<{ schemaId: string }>().schemaId;
}

/**
 * Moves the schemas to `hostId`, then the tag they carry: the events written before still carry the tag,
 * now another host's (an entity is linked only to tags its host sees, so a tag moves after its entities).
 */
async function moveWithTag(ids: readonly string[], tagId: string, hostId: string): Promise<void> {
  for (const id of ids) {
    expect((await asAdmin.put(`/schemas/${id}`, { schemaName: 'moved', hostId })).statusCode).toBe(200);
  }
  const tag = (await asAdmin.get(`/tags/${tagId}`)).json<Json>();
  expect((await asAdmin.put(`/tags/${tagId}`, { tagName: tag.tagName, hostId })).statusCode).toBe(200);
}

describe('tag ids in entity events, per reader', () => {
  it("a host reader sees only global and its own host's tag ids; an admin sees all", async () => {
    const [g, t1] = await createTags(api, [unique('g'), unique('t1')]);
    const start = await tail(api, admin);
    const id = await createSchema({ tagIds: [g, t1] });
    expect((await asAdmin.put(`/schemas/${id}`, { schemaName: 'renamed' })).statusCode).toBe(200);
    await moveWithTag([id], t1, H1);
    const both = [g, t1].sort();
    const expected = (tagIds: string[]) => [
      { type: 'entity.created', tagIds },
      { type: 'entity.tagged', tagIds },
      { type: 'entity.updated', tagIds },
    ];
    expect(await tagIdsSeen(reader2, start, id)).toEqual(expected([g]));
    expect(await tagIdsSeen(hostless, start, id)).toEqual(expected([g]));
    // The move to host 1 is host 1's event.
    const moved = { type: 'entity.updated', tagIds: both };
    expect(await tagIdsSeen(reader1, start, id)).toEqual([...expected(both), moved]);
    expect(await tagIdsSeen(admin, start, id)).toEqual([...expected(both), moved]);
    // Events without tag ids are left as they are.
    const created = about(await readAll(api, reader2, start), id)[0];
    expect(created?.data).toMatchObject({ entityType: 'schema', schemaId: id, schemaName: 'visibility', hostId: null });
  });

  it("an entity event written by a host writer carries every linked tag: admins see another host's tag too", async () => {
    const [g] = await createTags(api, [unique('g')]);
    const [t2] = await createTags(api, [unique('t2')], H2);
    const res = await asAdmin.post('/schemas', { schemaName: 'h1 entity', hostId: H1, tagIds: [g] });
    const id = res.json<{ schemaId: string }>().schemaId;
    // A link to host 2's tag made before link writes checked the entity's host.
    await linkInDb(api, 'schema', id, H1, [t2]);
    const start = await tail(api, admin);
    const writer1 = new As(api, await callers.writer(H1));
    const updated = await writer1.put(`/schemas/${id}`, { schemaName: 'by h1', hostId: H1 });
    // The writer's own answer shows what it can see...
    expect(updated.json<Json>().tagIds).toEqual([g]);
    // ...the event keeps every link, and each reader sees its share.
    expect(await tagIdsSeen(admin, start, id)).toEqual([{ type: 'entity.updated', tagIds: [g, t2].sort() }]);
    expect(await tagIdsSeen(reader1, start, id)).toEqual([{ type: 'entity.updated', tagIds: [g] }]);
  });

  it("a deleted tag's id is shown to the readers who could see it, judged by its host when it was linked", async () => {
    const [g] = await createTags(api, [unique('g')]);
    const [t1] = await createTags(api, [unique('t1')], H1);
    const start = await tail(api, admin);
    const id = await createSchema({ tagIds: [g] });
    // A global schema linked to host 1's tag, as links made before link writes checked the entity's host.
    await linkInDb(api, 'schema', id, null, [t1]);
    expect((await asAdmin.delete(`/tags/${t1}`)).statusCode).toBe(204);
    expect(await tagIdsSeen(reader1, start, id)).toEqual([
      { type: 'entity.created', tagIds: [g] },
      { type: 'entity.tagged', tagIds: [g] },
      { type: 'entity.untagged', tagIds: [t1] },
    ]);
    expect(await tagIdsSeen(reader2, start, id)).toEqual([
      { type: 'entity.created', tagIds: [g] },
      { type: 'entity.tagged', tagIds: [g] },
      { type: 'entity.untagged', tagIds: [] },
    ]);
  });

  it('a tag moved to another host is judged by its host now, as GET /tags/{tagId} judges it', async () => {
    const [t] = await createTags(api, [unique('moving')]);
    const start = await tail(api, admin);
    const id = await createSchema({ tagIds: [t] });
    await moveWithTag([id], t, H1);
    expect((await new As(api, reader2).get(`/tags/${t}`)).statusCode).toBe(404);
    const [created2] = await tagIdsSeen(reader2, start, id);
    expect(created2).toEqual({ type: 'entity.created', tagIds: [] });
    const [created1] = await tagIdsSeen(reader1, start, id);
    expect(created1).toEqual({ type: 'entity.created', tagIds: [t] });
  });

  it('costs a host reader one statement per page, however many events carry tag ids', async () => {
    const [g, t1] = await createTags(api, [unique('g'), unique('t1')]);
    const start = await tail(api, admin);
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) ids.push(await createSchema({ tagIds: [g, t1] }));
    await moveWithTag(ids, t1, H1);
    const end = await tail(api, admin);
    const read = async (as: string) => sqlDuring(() => feed(api, as, `after=${start}&limit=1000`));
    const asAdminRead = await read(admin);
    const asReader = await read(reader2);
    // At least through `end`: another test file's writes (a parallel jest worker) may commit after it.
    expect(asAdminRead.result.next).toBeGreaterThanOrEqual(end);
    expect(asReader.result.next).toBeGreaterThanOrEqual(end);
    // 25 entities, each with entity.created and entity.tagged carrying both tags.
    const withTags = asReader.result.events.filter((e) => Array.isArray(e.data.tagIds) && e.data.tagIds.includes(g));
    expect(withTags.length).toBeGreaterThanOrEqual(50);
    expect(withTags.every((e) => !(e.data.tagIds as string[]).includes(t1))).toBe(true);
    expect(asReader.queries).toBe(asAdminRead.queries + 1);
  });
});
