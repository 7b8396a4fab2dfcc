import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sqlDuring, startApi, unique, type TestApi } from '../support/api.js';
import { callers, token } from '../support/tokens.js';
import {
  As,
  createTags,
  ENTITY_CASES,
  expectProblem,
  insertTags,
  linkInDb,
  linksInDb,
  rowsInDb,
  type EntityCase,
  type Json,
} from './support.js';

let api: TestApi;
let admin: As;
let anonymous: As;
/** Hosts of this file only: other files share the database. */
const H1 = unique('h1');
const H2 = unique('h2');
let writer1: As;
let writer2: As;
let reader1: As;

beforeAll(async () => {
  api = await startApi();
  admin = new As(api, await callers.admin());
  anonymous = new As(api);
  writer1 = new As(api, await callers.writer(H1));
  writer2 = new As(api, await callers.writer(H2));
  reader1 = new As(api, await callers.reader(H1));
});
afterAll(() => api.close());

describe.each(ENTITY_CASES)('/$path', (c: EntityCase) => {
  const url = (id?: string, sub = ''): string => `/${c.path}${id === undefined ? '' : `/${id}`}${sub}`;
  const idOf = (entity: Json): string => entity[c.idField] as string;
  /** The ids on a list page, in page order. */
  const pageIds = (res: { json: <T>() => T }): string[] => res.json<Record<string, Json[]>>()[c.path].map(idOf);
  const ids = (res: { json: <T>() => T }): string[] => pageIds(res).sort();

  async function create(as: As, extra: Json = {}): Promise<Json> {
    const res = await as.post(url(), { ...c.fields, ...extra });
    expect(res.statusCode).toBe(201);
    return res.json<Json>();
  }

  describe('create', () => {
    it('writes the entity and its tags together: 201, Location, ETag, sorted distinct tagIds', async () => {
      const [a, b] = await createTags(api, [unique('a'), unique('b')]);
      const id = unique('e');
      const res = await admin.post(url(), { ...c.fields, [c.idField]: id, tagIds: [b, a, b] });
      expect(res.statusCode).toBe(201);
      expect(res.headers.location).toBe(url(id));
      expect(res.headers.etag).toBe('W/"1"');
      expect(res.json()).toEqual({
        [c.idField]: id,
        hostId: null,
        ...c.fields,
        updateUser: 'root',
        updateTs: expect.any(String),
        aggregateVersion: 1,
        tagIds: [a, b].sort(),
      });
      expect(await linksInDb(api, c.entityType, id)).toEqual([a, b].sort());
      const read = await admin.get(url(id));
      expect(read.statusCode).toBe(200);
      expect(read.headers.etag).toBe('W/"1"');
      expect(read.json()).toEqual(res.json());
    });

    it('generates a 22-character id and stores omitted optional fields as null', async () => {
      const entity = await create(writer1, {
        ...Object.fromEntries(Object.keys(c.fields).map((k) => [k, undefined])),
        [c.nameField]: 'only name',
        hostId: H1,
      });
      expect(idOf(entity)).toMatch(/^[A-Za-z0-9_-]{22}$/);
      for (const field of Object.keys(c.fields)) expect(entity[field]).toBe(field === c.nameField ? 'only name' : null);
      expect(entity).toMatchObject({ hostId: H1, updateUser: `w-${H1}`, tagIds: [] });
    });

    it('fails whole with 400 naming an unknown tag id: no entity and no link is left', async () => {
      const [known] = await createTags(api, [unique('k')]);
      const id = unique('e');
      const missing = unique('nope');
      const body = expectProblem(
        await admin.post(url(), { ...c.fields, [c.idField]: id, tagIds: [known, missing] }),
        400,
      );
      expect(body.detail).toContain(missing);
      expect(body.errors).toEqual([{ field: 'tagIds', message: expect.stringContaining(missing) }]);
      expect(JSON.stringify(body.errors)).not.toContain(known);
      expect(await rowsInDb(api, c, id)).toBe(0);
      expect(await linksInDb(api, c.entityType, id)).toEqual([]);
      expectProblem(await admin.get(url(id)), 404);
    });

    it('answers 409 for a duplicate id and keeps the first entity', async () => {
      const id = unique('e');
      await create(admin, { [c.idField]: id });
      expectProblem(await admin.post(url(), { ...c.fields, [c.idField]: id, [c.nameField]: 'other' }), 409);
      expect((await admin.get(url(id))).json<Json>()[c.nameField]).toBe(c.fields[c.nameField]);
    });

    it('validates at the edge: missing name, unknown field, bad id, bad tag id', async () => {
      const noName = { ...c.fields, [c.nameField]: undefined };
      expect(expectProblem(await admin.post(url(), noName), 400).errors).toContainEqual(
        expect.objectContaining({ field: c.nameField }),
      );
      expectProblem(await admin.post(url(), { ...c.fields, surprise: 1 }), 400);
      expectProblem(await admin.post(url(), { ...c.fields, [c.idField]: 'has space' }), 400);
      expectProblem(await admin.post(url(), { ...c.fields, tagIds: 'not-a-list' }), 400);
      expectProblem(await admin.post(url(), { ...c.fields, tagIds: ['bad id!'] }), 400);
    });

    it('accepts 50 distinct tags given with repeats, refuses 51 distinct ones', async () => {
      const ids = await insertTags(api, 51);
      const fifty = ids.slice(0, 50);
      const created = await create(admin, { tagIds: [...fifty, ...fifty.slice(0, 10)] });
      expect(created.tagIds).toEqual(fifty);
      expect(await linksInDb(api, c.entityType, idOf(created))).toEqual(fifty);
      const id = unique('e');
      const body = expectProblem(await admin.post(url(), { ...c.fields, [c.idField]: id, tagIds: ids }), 400);
      expect(body.errors).toContainEqual({ field: 'tagIds', message: expect.stringContaining('50') });
      expect(await rowsInDb(api, c, id)).toBe(0);
      const replaced = await admin.put(url(idOf(created), '/tags'), { tagIds: ids });
      expectProblem(replaced, 400);
      expect(await linksInDb(api, c.entityType, idOf(created))).toEqual(fifty);
    });
  });

  describe('update', () => {
    it('PUT with tagIds replaces fields and links in one go; version and ETag move on', async () => {
      const [a, b, d] = await createTags(api, [unique('a'), unique('b'), unique('d')]);
      const entity = await create(writer1, { hostId: H1, tagIds: [a, b] });
      const res = await writer1.put(url(idOf(entity)), { [c.nameField]: 'renamed', hostId: H1, tagIds: [d, b] });
      expect(res.statusCode).toBe(200);
      expect(res.headers.etag).toBe('W/"2"');
      const updated = res.json<Json>();
      expect(updated).toMatchObject({
        [c.nameField]: 'renamed',
        hostId: H1,
        aggregateVersion: 2,
        updateUser: `w-${H1}`,
      });
      expect(updated.tagIds).toEqual([b, d].sort());
      for (const field of Object.keys(c.fields)) if (field !== c.nameField) expect(updated[field]).toBeNull();
      expect(await linksInDb(api, c.entityType, idOf(entity))).toEqual([b, d].sort());
    });

    it('PUT without tagIds leaves the links alone; tagIds [] removes them all', async () => {
      const [a, b] = await createTags(api, [unique('a'), unique('b')]);
      const entity = await create(admin, { tagIds: [a, b] });
      const kept = await admin.put(url(idOf(entity)), { ...c.fields, [c.nameField]: 'again' });
      expect(kept.statusCode).toBe(200);
      expect(kept.json<Json>().tagIds).toEqual([a, b].sort());
      expect(await linksInDb(api, c.entityType, idOf(entity))).toEqual([a, b].sort());
      const cleared = await admin.put(url(idOf(entity)), { ...c.fields, tagIds: [] });
      expect(cleared.json<Json>()).toMatchObject({ tagIds: [], aggregateVersion: 3 });
      expect(await linksInDb(api, c.entityType, idOf(entity))).toEqual([]);
    });

    it('PUT with an unknown tag id changes nothing', async () => {
      const [a] = await createTags(api, [unique('a')]);
      const entity = await create(admin, { tagIds: [a] });
      const missing = unique('nope');
      const body = expectProblem(
        await admin.put(url(idOf(entity)), { ...c.fields, [c.nameField]: 'x', tagIds: [missing] }),
        400,
      );
      expect(body.errors).toEqual([{ field: 'tagIds', message: expect.stringContaining(missing) }]);
      const read = (await admin.get(url(idOf(entity)))).json<Json>();
      expect(read).toMatchObject({ [c.nameField]: c.fields[c.nameField], aggregateVersion: 1, tagIds: [a] });
    });

    it('honours If-Match (412 on a stale version) and refuses an id in the body that differs from the path', async () => {
      const entity = await create(admin);
      const id = idOf(entity);
      expect((await admin.put(url(id), { ...c.fields, [c.nameField]: 'v2' }, 'W/"1"')).statusCode).toBe(200);
      const stale = expectProblem(await admin.put(url(id), { ...c.fields, [c.nameField]: 'v3' }, 'W/"1"'), 412);
      expect(stale.detail).toContain('version 2');
      expectProblem(await admin.put(url(id, '/tags'), { tagIds: [] }, 'W/"1"'), 412);
      expectProblem(await admin.delete(url(id), '"1"'), 412);
      const read = await admin.get(url(id));
      expect(read.json<Json>()).toMatchObject({ [c.nameField]: 'v2', aggregateVersion: 2 });
      expect((await admin.put(url(id), { ...c.fields }, 'W/"2"')).statusCode).toBe(200);
      expectProblem(await admin.put(url(id), { ...c.fields, [c.idField]: unique('other') }), 400);
      expectProblem(await admin.put(url(unique('gone')), c.fields), 404);
    });
  });

  describe('/tags sub-resource', () => {
    it('GET lists the tag objects sorted by tagName, case-insensitively; 404 for an unknown entity', async () => {
      const suffix = unique('s');
      const [b, a, cc] = await createTags(api, [`b-${suffix}`, `A-${suffix}`, `c-${suffix}`]);
      const entity = await create(admin, { tagIds: [cc, b, a] });
      const res = await reader1.get(url(idOf(entity), '/tags'));
      expect(res.statusCode).toBe(200);
      const tags = res.json<Json[]>();
      expect(tags.map((t) => t.tagName)).toEqual([`A-${suffix}`, `b-${suffix}`, `c-${suffix}`]);
      expect(tags[0]).toEqual({
        tagId: a,
        hostId: null,
        tagName: `A-${suffix}`,
        tagDesc: null,
        updateUser: 'root',
        updateTs: expect.any(String),
        aggregateVersion: 1,
      });
      expectProblem(await admin.get(url(unique('gone'), '/tags')), 404);
      const untagged = await create(admin);
      expect((await admin.get(url(idOf(untagged), '/tags'))).json()).toEqual([]);
    });

    it('PUT replaces the tags and answers the entity with the next version', async () => {
      const [a, b, d] = await createTags(api, [unique('a'), unique('b'), unique('d')]);
      const entity = await create(writer1, { hostId: H1, tagIds: [a, b] });
      const res = await writer1.put(url(idOf(entity), '/tags'), { tagIds: [d, b, d] });
      expect(res.statusCode).toBe(200);
      expect(res.headers.etag).toBe('W/"2"');
      expect(res.json()).toEqual({
        ...entity,
        tagIds: [b, d].sort(),
        aggregateVersion: 2,
        updateTs: expect.any(String),
      });
      expect(await linksInDb(api, c.entityType, idOf(entity))).toEqual([b, d].sort());
      expectProblem(await writer1.put(url(unique('gone'), '/tags'), { tagIds: [] }), 404);
      expectProblem(await writer1.put(url(idOf(entity), '/tags'), {}), 400);
      const missing = unique('nope');
      const bad = expectProblem(await writer1.put(url(idOf(entity), '/tags'), { tagIds: [a, missing] }), 400);
      expect(bad.errors).toEqual([{ field: 'tagIds', message: expect.stringContaining(missing) }]);
      expect(await linksInDb(api, c.entityType, idOf(entity))).toEqual([b, d].sort());
    });
  });

  describe('delete', () => {
    it('removes the entity and its links: 204, then 404', async () => {
      const [a, b] = await createTags(api, [unique('a'), unique('b')]);
      const entity = await create(admin, { tagIds: [a, b] });
      const res = await admin.delete(url(idOf(entity)));
      expect(res.statusCode).toBe(204);
      expect(res.body).toBe('');
      expect(await rowsInDb(api, c, idOf(entity))).toBe(0);
      expect(await linksInDb(api, c.entityType, idOf(entity))).toEqual([]);
      expectProblem(await admin.get(url(idOf(entity))), 404);
      expectProblem(await admin.delete(url(idOf(entity))), 404);
      expect((await admin.get(`/tags/${a}`)).statusCode).toBe(200);
    });

    it('deleting a tag removes its links (cascade)', async () => {
      const [a, b] = await createTags(api, [unique('a'), unique('b')]);
      const entity = await create(admin, { tagIds: [a, b] });
      expect((await admin.delete(`/tags/${a}`)).statusCode).toBe(204);
      expect(await linksInDb(api, c.entityType, idOf(entity))).toEqual([b]);
      expect((await admin.get(url(idOf(entity)))).json<Json>().tagIds).toEqual([b]);
    });
  });

  describe('list and filter', () => {
    /** x on e1, y on e2, both on e3, none on e4; names differ in case from what the filters ask. */
    async function seed(): Promise<{ x: string; y: string; e: string[] }> {
      const x = unique('X');
      const y = unique('Y');
      const [tx, ty] = await createTags(api, [x, y]);
      const e: string[] = [];
      for (const tagIds of [[tx], [ty], [tx, ty], []]) e.push(idOf(await create(admin, { tagIds })));
      return { x, y, e };
    }

    it('any-match by default; names compared case-insensitively; comma and repeated forms', async () => {
      const { x, y, e } = await seed();
      const one = await reader1.get(`${url()}?tagNames=${x.toLowerCase()}`);
      expect(one.statusCode).toBe(200);
      expect(one.json<Json>().total).toBe(2);
      expect(ids(one)).toEqual([e[0], e[2]].sort());
      const upper = encodeURIComponent(y.toUpperCase());
      for (const query of [
        `tagNames=${x},${upper}`,
        `tagNames=${x}&tagNames=${upper}`,
        `tagNames=${x},zz-none&tagNames=${y}`,
      ]) {
        const res = await reader1.get(`${url()}?${query}&tagMatch=any`);
        expect({ query, total: res.json<Json>().total }).toEqual({ query, total: 3 });
        expect(ids(res)).toEqual([e[0], e[1], e[2]].sort());
      }
      expect((await reader1.get(`${url()}?tagNames=${unique('none')}`)).json()).toEqual({ total: 0, [c.path]: [] });
    });

    it('tagMatch=all returns only entities carrying every name', async () => {
      const { x, y, e } = await seed();
      for (const query of [`tagNames=${x},${y}`, `tagNames=${x.toUpperCase()}&tagNames=${y}`]) {
        const res = await reader1.get(`${url()}?${query}&tagMatch=all`);
        expect(res.json<Json>().total).toBe(1);
        expect(ids(res)).toEqual([e[2]]);
      }
      const none = await reader1.get(`${url()}?tagNames=${x},${y},${unique('none')}&tagMatch=all`);
      expect(none.json()).toEqual({ total: 0, [c.path]: [] });
      expectProblem(await reader1.get(`${url()}?tagNames=${x}&tagMatch=some`), 400);
      expectProblem(await reader1.get(`${url()}?tagNames=${x}&tagMatch=all&tagMatch=any`), 400);
    });

    it('pages with offset and limit; total counts every match', async () => {
      const { x, y, e } = await seed();
      const all = [e[0], e[1], e[2]].sort();
      const pages: string[] = [];
      for (const offset of [0, 2]) {
        const res = await reader1.get(`${url()}?tagNames=${x},${y}&sort=${c.idField}&limit=2&offset=${offset}`);
        expect(res.json<Json>().total).toBe(3);
        pages.push(...pageIds(res));
      }
      expect(pages).toEqual(all);
      const desc = await reader1.get(`${url()}?tagNames=${x},${y}&sort=-${c.idField}`);
      expect(pageIds(desc)).toEqual([...all].reverse());
      expectProblem(await reader1.get(`${url()}?limit=0`), 400);
      expectProblem(await reader1.get(`${url()}?limit=1001`), 400);
      expectProblem(await reader1.get(`${url()}?sort=nope`), 400);
      const unfiltered = await reader1.get(`${url()}?limit=1`);
      expect(pageIds(unfiltered)).toHaveLength(1);
      expect(unfiltered.json<Json>().total as number).toBeGreaterThanOrEqual(4);
    });

    it('sorts by the name case-insensitively (the default) or by any sort key, descending with -', async () => {
      const name = unique('s');
      const [t] = await createTags(api, [name]);
      for (const n of ['b', 'A', 'c']) await create(admin, { [c.nameField]: `${n}-${name}`, tagIds: [t] });
      const names = async (query: string): Promise<unknown[]> => {
        const page = (await reader1.get(`${url()}?tagNames=${name}${query}`)).json<Record<string, Json[]>>();
        return page[c.path].map((entity) => entity[c.nameField]);
      };
      expect(await names('')).toEqual([`A-${name}`, `b-${name}`, `c-${name}`]);
      expect(await names(`&sort=-${c.nameField}`)).toEqual([`c-${name}`, `b-${name}`, `A-${name}`]);
      expect((await reader1.get(`${url()}?tagNames=&limit=1`)).json<Json>().total as number).toBeGreaterThan(3);
    });

    it("counts only links of its own entity type (another type's entity with the same id and tag is not returned)", async () => {
      const name = unique('z');
      const [z] = await createTags(api, [name]);
      const id = unique('same');
      await create(admin, { [c.idField]: id });
      for (const other of ENTITY_CASES.filter((o) => o !== c)) {
        const res = await admin.post(`/${other.path}`, { ...other.fields, [other.idField]: id, tagIds: [z] });
        expect(res.statusCode).toBe(201);
      }
      expect((await admin.get(`${url()}?tagNames=${name}`)).json()).toEqual({ total: 0, [c.path]: [] });
      expect((await admin.get(url(id))).json<Json>().tagIds).toEqual([]);
      expect((await admin.get(url(id, '/tags'))).json()).toEqual([]);
      await admin.delete(url(id));
      for (const other of ENTITY_CASES.filter((o) => o !== c)) {
        expect(await linksInDb(api, other.entityType, id)).toEqual([z]);
      }
    });
  });

  describe('who sees what', () => {
    it("a host-bound token cannot see, change, tag or delete another host's entity (404)", async () => {
      const [g] = await createTags(api, [unique('g')]);
      const entity = await create(writer1, { hostId: H1, tagIds: [g] });
      const id = idOf(entity);
      expectProblem(await writer2.get(url(id)), 404);
      expectProblem(await writer2.get(url(id, '/tags')), 404);
      expectProblem(await writer2.put(url(id), { ...c.fields, hostId: H2 }), 404);
      expectProblem(await writer2.put(url(id, '/tags'), { tagIds: [] }), 404);
      expectProblem(await writer2.delete(url(id)), 404);
      // DESIGN 16: a query naming another host is refused (403) before any SQL.
      expectProblem(await writer2.get(`${url()}?hostId=${H1}`), 403);
      const filtered = await writer2.get(
        `${url()}?tagNames=${(await admin.get(`/tags/${g}`)).json<Json>().tagName as string}`,
      );
      expect(filtered.json<Json>().total).toBe(0);
      expect(await linksInDb(api, c.entityType, id)).toEqual([g]);
      expect((await reader1.get(url(id))).json<Json>()).toMatchObject({ aggregateVersion: 1, tagIds: [g] });
      const own = await reader1.get(
        `${url()}?hostId=${H1}&tagNames=${(await admin.get(`/tags/${g}`)).json<Json>().tagName as string}`,
      );
      expect(ids(own)).toEqual([id]);
    });

    it("cannot use another host's tag (400 unknown), nor write global or other-host entities (403)", async () => {
      const [t1] = await createTags(api, [unique('t1')], H1);
      const body = expectProblem(await writer2.post(url(), { ...c.fields, hostId: H2, tagIds: [t1] }), 400);
      expect(body.errors).toEqual([{ field: 'tagIds', message: expect.stringContaining(t1) }]);
      expect((await create(writer1, { hostId: H1, tagIds: [t1] })).tagIds).toEqual([t1]);
      const global = await create(admin);
      expectProblem(await writer1.post(url(), { ...c.fields }), 403);
      expectProblem(await writer1.post(url(), { ...c.fields, hostId: H2 }), 403);
      expectProblem(await writer1.put(url(idOf(global)), c.fields), 403);
      expectProblem(await writer1.put(url(idOf(global), '/tags'), { tagIds: [] }), 403);
      expectProblem(await writer1.delete(url(idOf(global))), 403);
      const mine = await create(writer1, { hostId: H1 });
      expectProblem(await writer1.put(url(idOf(mine)), { ...c.fields, hostId: null }), 403);
      expect((await writer1.get(url(idOf(global)))).statusCode).toBe(200);
    });

    it('leaves out tags the caller cannot see from tagIds and /tags', async () => {
      const [other] = await createTags(api, [unique('o')], H2);
      const [g] = await createTags(api, [unique('g')]);
      const entity = await create(admin, { hostId: H1, tagIds: [g] });
      // A link to another host's tag, as one made before link writes checked the entity's host.
      await linkInDb(api, c.entityType, idOf(entity), H1, [other]);
      expect((await admin.get(url(idOf(entity)))).json<Json>().tagIds).toEqual([other, g].sort());
      expect((await reader1.get(url(idOf(entity)))).json<Json>().tagIds).toEqual([g]);
      expect((await reader1.get(url(idOf(entity), '/tags'))).json<Json[]>().map((t) => t.tagId)).toEqual([g]);
    });

    it('portal.r cannot write (403) and nothing reaches the database', async () => {
      const entity = await create(writer1, { hostId: H1 });
      const attempts = [
        () => reader1.post(url(), { ...c.fields, hostId: H1 }),
        () => reader1.put(url(idOf(entity)), { ...c.fields, hostId: H1 }),
        () => reader1.put(url(idOf(entity), '/tags'), { tagIds: [] }),
        () => reader1.delete(url(idOf(entity))),
      ];
      for (const attempt of attempts) {
        const { result, queries } = await sqlDuring(attempt);
        expectProblem(result, 403);
        expect(result.headers['www-authenticate']).toContain('insufficient_scope');
        expect(queries).toBe(0);
      }
      const noScope = new As(api, await token({ sub: 'nobody', host: H1 }));
      const { result, queries } = await sqlDuring(() => noScope.get(url(idOf(entity))));
      expectProblem(result, 403);
      expect(queries).toBe(0);
    });

    it('401 without a token, before any SQL', async () => {
      const id = unique('e');
      const attempts = [
        () => anonymous.post(url(), c.fields),
        () => anonymous.get(url()),
        () => anonymous.get(`${url()}?tagNames=a`),
        () => anonymous.get(url(id)),
        () => anonymous.put(url(id), c.fields),
        () => anonymous.delete(url(id)),
        () => anonymous.get(url(id, '/tags')),
        () => anonymous.put(url(id, '/tags'), { tagIds: [] }),
      ];
      for (const attempt of attempts) {
        const { result, queries } = await sqlDuring(attempt);
        expectProblem(result, 401);
        expect(result.headers['www-authenticate']).toBe('Bearer realm="bindery"');
        expect(queries).toBe(0);
      }
    });
  });
});
