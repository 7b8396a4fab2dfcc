import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { call, sqlDuring, startApi, unique, type TestApi } from '../support/api.js';
import { callers, token } from '../support/tokens.js';

interface TagBody {
  tagId: string;
  hostId: string | null;
  tagName: string;
  tagDesc: string | null;
  updateUser: string | null;
  updateTs: string;
  aggregateVersion: number;
}

let api: TestApi;
let db: DataSource;
let admin: string;

beforeAll(async () => {
  api = await startApi();
  db = api.app.get(DataSource);
  admin = await callers.admin();
});
afterAll(() => api.close());

async function createTag(body: Record<string, unknown>, as = admin): Promise<TagBody> {
  const res = await call(api, 'POST', '/tags', { token: as, body });
  expect(res.statusCode).toBe(201);
  return res.json<TagBody>();
}

async function rowOf(tagId: string): Promise<Record<string, unknown> | undefined> {
  const rows: Record<string, unknown>[] = await db.query('select * from tag where tag_id = $1', [tagId]);
  return rows[0];
}

describe('POST /tags', () => {
  it('writes the tag and its change event in one statement (its own transaction)', async () => {
    const name = unique('one');
    const { result, queries } = await sqlDuring(() =>
      call(api, 'POST', '/tags', { token: admin, body: { tagName: name } }),
    );
    expect(result.statusCode).toBe(201);
    expect(queries).toBe(1);
    const tagId = result.json<TagBody>().tagId;
    const events = await db.query<{ type: string }[]>(
      `select type from change_event where data->>'tagId' = $1 order by seq`,
      [tagId],
    );
    expect(events).toEqual([{ type: 'tag.created' }]);
  });

  it('creates a tag with a generated 22-char id, Location, ETag and audit fields', async () => {
    const name = unique('pii');
    const before = Date.now();
    const res = await call(api, 'POST', '/tags', {
      token: admin,
      body: { tagName: `  ${name}  `, tagDesc: 'personal data' },
    });
    expect(res.statusCode).toBe(201);
    const tag = res.json<TagBody>();
    expect(tag.tagId).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(res.headers.location).toBe(`/tags/${tag.tagId}`);
    expect(res.headers.etag).toBe('W/"1"');
    expect(tag).toEqual({
      tagId: tag.tagId,
      hostId: null,
      tagName: name,
      tagDesc: 'personal data',
      updateUser: 'root',
      updateTs: expect.any(String),
      aggregateVersion: 1,
    });
    expect(Date.parse(tag.updateTs)).toBeGreaterThanOrEqual(before - 1000);
    expect(tag.updateTs).toMatch(/Z$/);
    expect(await rowOf(tag.tagId)).toMatchObject({ tag_name: name, tag_desc: 'personal data', aggregate_version: 1 });
  });

  it('generates time-ordered ids (UUIDv7)', async () => {
    const a = await createTag({ tagName: unique('ord') });
    const b = await createTag({ tagName: unique('ord') });
    const uuid = (id: string) => Buffer.from(id, 'base64url');
    expect(uuid(a.tagId)).toHaveLength(16);
    expect(uuid(a.tagId)[6] >> 4).toBe(7);
    expect(Buffer.compare(uuid(a.tagId), uuid(b.tagId))).toBeLessThan(0);
  });

  it('keeps a given tagId and answers 409 for a duplicate id', async () => {
    const id = unique('id').slice(0, 22);
    await createTag({ tagId: id, tagName: unique('n') });
    const res = await call(api, 'POST', '/tags', { token: admin, body: { tagId: id, tagName: unique('n') } });
    expect(res.statusCode).toBe(409);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 409, title: 'Conflict', detail: expect.stringContaining(id) });
  });

  it('treats names case-insensitively: Prod and prod cannot both exist', async () => {
    const name = unique('Prod');
    await createTag({ tagName: name });
    const res = await call(api, 'POST', '/tags', { token: admin, body: { tagName: name.toLowerCase() } });
    expect(res.statusCode).toBe(409);
    const count: { n: number }[] = await db.query(
      'select count(*)::int as n from tag where lower(tag_name) = lower($1)',
      [name],
    );
    expect(count[0].n).toBe(1);
  });

  it('50 concurrent creates of case variants of one name give exactly one 201', async () => {
    const base = unique('race');
    const variants = Array.from({ length: 50 }, (_, i) =>
      [...base].map((c, j) => ((i >> (j % 6)) & 1 ? c.toUpperCase() : c)).join(''),
    );
    const results = await Promise.all(
      variants.map((tagName) => call(api, 'POST', '/tags', { token: admin, body: { tagName } })),
    );
    const statuses = results.map((r) => r.statusCode).sort();
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(49);
    const rows: unknown[] = await db.query('select 1 from tag where lower(tag_name) = lower($1)', [base]);
    expect(rows).toHaveLength(1);
  });

  it.each([
    ['missing tagName', {}, 'tagName'],
    ['blank tagName', { tagName: '   ' }, 'tagName'],
    ['tagName over 100 chars', { tagName: 'x'.repeat(101) }, 'tagName'],
    ['tagName with a control character', { tagName: 'a\u0007b' }, 'tagName'],
    ['tagName not a string', { tagName: 42 }, 'tagName'],
    ['tagDesc over 1024 chars', { tagName: 'ok', tagDesc: 'd'.repeat(1025) }, 'tagDesc'],
    ['tagId with a bad character', { tagId: 'a/b', tagName: 'ok' }, 'tagId'],
    ['tagId over 22 chars', { tagId: 'a'.repeat(23), tagName: 'ok' }, 'tagId'],
    ['hostId over 22 chars', { hostId: 'h'.repeat(23), tagName: 'ok' }, 'hostId'],
    ['an unknown field', { tagName: 'ok', color: 'red' }, 'color'],
    ['updateUser set by the client', { tagName: 'ok', updateUser: 'mallory' }, 'updateUser'],
  ])('rejects %s with 400 naming the field', async (_, body, field) => {
    const res = await call(api, 'POST', '/tags', { token: admin, body });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const problem = res.json<{ errors: { field: string }[] }>();
    expect(problem).toMatchObject({ type: 'about:blank', title: 'Bad Request', status: 400 });
    expect(problem.errors.map((e) => e.field)).toContain(field);
  });

  it('answers bad JSON with 400 and an oversized body with 413, both problem+json', async () => {
    const bad = await api.app.inject({
      method: 'POST',
      url: '/tags',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      payload: '{"tagName":',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers['content-type']).toMatch(/^application\/problem\+json/);
    const big = await api.app.inject({
      method: 'POST',
      url: '/tags',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ tagName: 'x', tagDesc: 'y'.repeat(2 * 1024 * 1024) }),
    });
    expect(big.statusCode).toBe(413);
    expect(big.json()).toMatchObject({ status: 413, title: 'Content Too Large' });
  });

  it('takes updateUser from client_id, then cid, when there is no sub', async () => {
    const viaClientId = await token({ client_id: 'svc-a', scope: 'portal.admin' });
    const viaCid = await token({ cid: 'svc-b', scope: 'portal.admin' });
    expect((await createTag({ tagName: unique('c') }, viaClientId)).updateUser).toBe('svc-a');
    expect((await createTag({ tagName: unique('c') }, viaCid)).updateUser).toBe('svc-b');
  });
});

describe('GET /tags', () => {
  const host = unique('h').slice(0, 22);
  const names = ['alpha', 'Bravo', 'charlie', 'delta', 'echo'];
  let created: TagBody[] = [];

  beforeAll(async () => {
    created = [];
    for (const [i, n] of names.entries()) {
      created.push(
        await createTag({ tagName: `${host}-${n}`, hostId: host, tagDesc: i % 2 === 0 ? `even ${n} 100%` : null }),
      );
    }
  });

  const list = async (query: string, as = admin) => {
    const res = await call(api, 'GET', `/tags?hostId=${host}&${query}`, { token: as });
    expect(res.statusCode).toBe(200);
    return res.json<{ total: number; tags: TagBody[] }>();
  };

  it('pages with offset and limit; total counts all matches, not just the page', async () => {
    const page = await list('limit=2&offset=1');
    expect(page.total).toBe(5);
    expect(page.tags.map((t) => t.tagName)).toEqual([`${host}-Bravo`, `${host}-charlie`]);
    const past = await list('offset=10');
    expect(past).toEqual({ total: 5, tags: [] });
    // A host-bound reader's total is counted in two parts (its host's tags, then the global ones).
    const reader = await callers.reader(host);
    expect((await list('limit=2&offset=1', reader)).total).toBe(5);
    expect(await list('offset=10', reader)).toEqual({ total: 5, tags: [] });
  });

  it('defaults to 20 per page sorted by name, case-insensitively', async () => {
    const page = await list('');
    expect(page.tags.map((t) => t.tagName)).toEqual(names.map((n) => `${host}-${n}`));
  });

  it.each([
    ['tagName', (t: TagBody) => t.tagName.toLowerCase()],
    ['tagDesc', (t: TagBody) => t.tagDesc?.toLowerCase() ?? null],
    ['updateTs', (t: TagBody) => t.updateTs],
    ['tagId', (t: TagBody) => t.tagId],
  ] as const)('sorts by %s in both directions', async (key, value) => {
    const up = (await list(`sort=${key}`)).tags.map(value);
    const down = (await list(`sort=-${key}`)).tags.map(value);
    const nonNull = up.filter((v): v is string => v !== null);
    expect(nonNull).toEqual([...nonNull].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    if (key !== 'tagDesc') expect(down).toEqual([...up].reverse());
    else expect(down.filter((v) => v !== null)).toEqual([...nonNull].reverse());
  });

  it('sorts by several keys', async () => {
    const page = await list('sort=-tagDesc,tagName');
    expect(page.tags.map((t) => t.tagName)).toEqual([
      `${host}-Bravo`,
      `${host}-delta`,
      `${host}-echo`,
      `${host}-charlie`,
      `${host}-alpha`,
    ]);
  });

  it('filters by tagName and tagDesc substrings (case-insensitive), q over both, and exact hostId', async () => {
    expect((await list('tagName=BRAV')).tags.map((t) => t.tagName)).toEqual([`${host}-Bravo`]);
    expect((await list('tagDesc=EVEN%20C')).tags.map((t) => t.tagName)).toEqual([`${host}-charlie`]);
    expect((await list('q=echo')).total).toBe(1);
    expect((await list('q=even')).total).toBe(3);
    const other = await call(api, 'GET', `/tags?hostId=${host}x`, { token: admin });
    expect(other.json()).toEqual({ total: 0, tags: [] });
  });

  it('matches LIKE wildcards literally', async () => {
    expect((await list('tagDesc=100%25')).total).toBe(3);
    expect((await list('tagName=_')).total).toBe(0);
    expect((await list('q=%25')).total).toBe(3);
  });

  it.each([
    ['limit=0'],
    ['limit=1001'],
    ['limit=abc'],
    ['limit=1&limit=2'],
    ['offset=-1'],
    ['tagName=a&tagName=b'],
    ['sort=color'],
    ['sort=tagName,-tagName'],
    ['colour=red'],
  ])('rejects %s with 400', async (query) => {
    const res = await call(api, 'GET', `/tags?${query}`, { token: admin });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});

describe('GET /tags/{tagId}', () => {
  it('returns the tag with its ETag', async () => {
    const tag = await createTag({ tagName: unique('one') });
    const res = await call(api, 'GET', `/tags/${tag.tagId}`, { token: admin });
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe('W/"1"');
    expect(res.json()).toEqual(tag);
  });

  it.each([['NoSuchTag'], ['bad%20id'], ['x'.repeat(23)]])('answers 404 for %s', async (id) => {
    const res = await call(api, 'GET', `/tags/${id}`, { token: admin });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ status: 404, title: 'Not Found' });
  });
});

describe('PUT /tags/{tagId}', () => {
  it('replaces the tag, bumps the version and ETag, and records the writer', async () => {
    const tag = await createTag({ tagName: unique('put'), tagDesc: 'old' });
    const name = unique('renamed');
    const res = await call(api, 'PUT', `/tags/${tag.tagId}`, {
      token: await token({ sub: 'bob', scope: 'portal.admin' }),
      body: { tagName: name },
    });
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe('W/"2"');
    expect(res.json()).toMatchObject({
      tagId: tag.tagId,
      tagName: name,
      tagDesc: null,
      updateUser: 'bob',
      aggregateVersion: 2,
    });
    expect(await rowOf(tag.tagId)).toMatchObject({
      tag_name: name,
      tag_desc: null,
      update_user: 'bob',
      aggregate_version: 2,
    });
  });

  it('honours If-Match: a stale version is 412 and changes nothing; the current one or * succeed', async () => {
    const tag = await createTag({ tagName: unique('ifm') });
    const stale = await call(api, 'PUT', `/tags/${tag.tagId}`, {
      token: admin,
      body: { tagName: unique('x') },
      headers: { 'if-match': 'W/"7"' },
    });
    expect(stale.statusCode).toBe(412);
    expect(await rowOf(tag.tagId)).toMatchObject({ tag_name: tag.tagName, aggregate_version: 1 });
    const current = await call(api, 'PUT', `/tags/${tag.tagId}`, {
      token: admin,
      body: { tagName: unique('y') },
      headers: { 'if-match': 'W/"1"' },
    });
    expect(current.statusCode).toBe(200);
    const star = await call(api, 'PUT', `/tags/${tag.tagId}`, {
      token: admin,
      body: { tagName: unique('z') },
      headers: { 'if-match': '*' },
    });
    expect(star.json()).toMatchObject({ aggregateVersion: 3 });
    const malformed = await call(api, 'PUT', `/tags/${tag.tagId}`, {
      token: admin,
      body: { tagName: unique('z') },
      headers: { 'if-match': 'three' },
    });
    expect(malformed.statusCode).toBe(400);
  });

  it('requires a body tagId to equal the path', async () => {
    const tag = await createTag({ tagName: unique('path') });
    const res = await call(api, 'PUT', `/tags/${tag.tagId}`, { token: admin, body: { tagId: 'other', tagName: 'x' } });
    expect(res.statusCode).toBe(400);
    const same = await call(api, 'PUT', `/tags/${tag.tagId}`, {
      token: admin,
      body: { tagId: tag.tagId, tagName: unique('p') },
    });
    expect(same.statusCode).toBe(200);
  });

  it('answers 409 when renaming onto another tag name in another case, and 404 for an unknown tag', async () => {
    const taken = await createTag({ tagName: unique('Taken') });
    const tag = await createTag({ tagName: unique('free') });
    const res = await call(api, 'PUT', `/tags/${tag.tagId}`, {
      token: admin,
      body: { tagName: taken.tagName.toUpperCase() },
    });
    expect(res.statusCode).toBe(409);
    expect(await rowOf(tag.tagId)).toMatchObject({ tag_name: tag.tagName, aggregate_version: 1 });
    const missing = await call(api, 'PUT', '/tags/NoSuchTag', { token: admin, body: { tagName: unique('m') } });
    expect(missing.statusCode).toBe(404);
  });
});

describe('DELETE /tags/{tagId}', () => {
  it('answers 204 and removes the row; then 404', async () => {
    const tag = await createTag({ tagName: unique('del') });
    const res = await call(api, 'DELETE', `/tags/${tag.tagId}`, { token: admin });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect(await rowOf(tag.tagId)).toBeUndefined();
    expect((await call(api, 'DELETE', `/tags/${tag.tagId}`, { token: admin })).statusCode).toBe(404);
  });

  it('honours If-Match', async () => {
    const tag = await createTag({ tagName: unique('delm') });
    const res = await call(api, 'DELETE', `/tags/${tag.tagId}`, { token: admin, headers: { 'if-match': 'W/"2"' } });
    expect(res.statusCode).toBe(412);
    expect(await rowOf(tag.tagId)).toBeDefined();
  });
});

describe('who sees what (DESIGN 4.3)', () => {
  const hostA = unique('ha').slice(0, 22);
  const hostB = unique('hb').slice(0, 22);
  let globalTag: TagBody;
  let tagA: TagBody;
  let tagB: TagBody;

  beforeAll(async () => {
    globalTag = await createTag({ tagName: unique(`${hostA}-global`) });
    tagA = await createTag({ tagName: unique(`${hostA}-own`), hostId: hostA }, await callers.writer(hostA));
    tagB = await createTag({ tagName: unique(`${hostA}-other`), hostId: hostB });
  });

  it('a host-bound writer creates tags of its own host only', async () => {
    const writer = await callers.writer(hostA);
    expect(tagA.updateUser).toBe(`w-${hostA}`);
    const other = await call(api, 'POST', '/tags', { token: writer, body: { tagName: unique('x'), hostId: hostB } });
    expect(other.statusCode).toBe(403);
    const global = await call(api, 'POST', '/tags', { token: writer, body: { tagName: unique('x') } });
    expect(global.statusCode).toBe(403);
    expect(global.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('a host-bound token sees global tags and its own host, and another host as not found', async () => {
    const reader = await callers.reader(hostA);
    expect((await call(api, 'GET', `/tags/${globalTag.tagId}`, { token: reader })).statusCode).toBe(200);
    expect((await call(api, 'GET', `/tags/${tagA.tagId}`, { token: reader })).statusCode).toBe(200);
    const hidden = await call(api, 'GET', `/tags/${tagB.tagId}`, { token: reader });
    expect(hidden.statusCode).toBe(404);
    const names = (await call(api, 'GET', `/tags?tagName=${hostA}&limit=1000`, { token: reader }))
      .json<{ tags: TagBody[] }>()
      .tags.map((t) => t.tagId);
    expect(names).toEqual(expect.arrayContaining([globalTag.tagId, tagA.tagId]));
    expect(names).not.toContain(tagB.tagId);
    // DESIGN 16: a query naming another host is 403, decided before any SQL.
    const { result: filtered, queries } = await sqlDuring(() =>
      call(api, 'GET', `/tags?hostId=${hostB}`, { token: reader }),
    );
    expect(filtered.statusCode).toBe(403);
    expect(JSON.stringify(filtered.json())).not.toContain(tagB.tagId);
    expect(queries).toBe(0);
  });

  it("a host-bound writer cannot change another host's tag (404) nor a global one (403)", async () => {
    const writer = await callers.writer(hostA);
    expect(
      (await call(api, 'PUT', `/tags/${tagB.tagId}`, { token: writer, body: { tagName: unique('x'), hostId: hostA } }))
        .statusCode,
    ).toBe(404);
    expect((await call(api, 'DELETE', `/tags/${tagB.tagId}`, { token: writer })).statusCode).toBe(404);
    expect(
      (
        await call(api, 'PUT', `/tags/${globalTag.tagId}`, {
          token: writer,
          body: { tagName: unique('x'), hostId: hostA },
        })
      ).statusCode,
    ).toBe(403);
    expect((await call(api, 'DELETE', `/tags/${globalTag.tagId}`, { token: writer })).statusCode).toBe(403);
    expect(await rowOf(tagB.tagId)).toMatchObject({ host_id: hostB, aggregate_version: 1 });
    expect(await rowOf(globalTag.tagId)).toMatchObject({ host_id: null, aggregate_version: 1 });
  });

  it('a host-bound writer cannot move its tag to global or to another host', async () => {
    const writer = await callers.writer(hostA);
    const own = await createTag({ tagName: unique('mine'), hostId: hostA }, writer);
    expect(
      (await call(api, 'PUT', `/tags/${own.tagId}`, { token: writer, body: { tagName: own.tagName } })).statusCode,
    ).toBe(403);
    expect(
      (await call(api, 'PUT', `/tags/${own.tagId}`, { token: writer, body: { tagName: own.tagName, hostId: hostB } }))
        .statusCode,
    ).toBe(403);
    const ok = await call(api, 'PUT', `/tags/${own.tagId}`, {
      token: writer,
      body: { tagName: own.tagName, hostId: hostA, tagDesc: 'd' },
    });
    expect(ok.statusCode).toBe(200);
  });

  it('portal.admin writes global tags and any host, and sees every host', async () => {
    expect((await call(api, 'GET', `/tags/${tagB.tagId}`, { token: admin })).statusCode).toBe(200);
    const res = await call(api, 'PUT', `/tags/${tagA.tagId}`, {
      token: admin,
      body: { tagName: tagA.tagName, hostId: hostA, tagDesc: 'by admin' },
    });
    expect(res.statusCode).toBe(200);
  });

  it('a token without host and without admin sees only global tags and writes nothing', async () => {
    const plain = await token({ sub: 'nohost', scope: 'portal.r portal.w' });
    expect((await call(api, 'GET', `/tags/${globalTag.tagId}`, { token: plain })).statusCode).toBe(200);
    expect((await call(api, 'GET', `/tags/${tagA.tagId}`, { token: plain })).statusCode).toBe(404);
    expect((await call(api, 'POST', '/tags', { token: plain, body: { tagName: unique('x') } })).statusCode).toBe(403);
  });

  it('portal.r cannot write: 403 insufficient_scope before any SQL', async () => {
    const reader = await callers.reader(hostA);
    for (const [method, url, body] of [
      ['POST', '/tags', { tagName: unique('r'), hostId: hostA }],
      ['PUT', `/tags/${tagA.tagId}`, { tagName: 'r', hostId: hostA }],
      ['DELETE', `/tags/${tagA.tagId}`, undefined],
    ] as const) {
      const { result, queries } = await sqlDuring(() => call(api, method, url, { token: reader, body }));
      expect(result.statusCode).toBe(403);
      expect(result.headers['www-authenticate']).toBe(
        'Bearer realm="bindery", error="insufficient_scope", scope="tags:write"',
      );
      expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(queries).toBe(0);
    }
  });

  it('a token without portal scopes cannot read', async () => {
    const none = await token({ sub: 'x', scope: 'openid' });
    const { result, queries } = await sqlDuring(() => call(api, 'GET', '/tags', { token: none }));
    expect(result.statusCode).toBe(403);
    expect(queries).toBe(0);
  });
});
