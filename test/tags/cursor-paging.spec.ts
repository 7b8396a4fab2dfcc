import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type DataSource } from 'typeorm';
import { call, unique, type TestApi } from '../support/api.js';
import {
  cursorOf,
  expectCursorRefused,
  followCursors,
  insideOf,
  listsApi,
  onePage,
  pageAt,
  type Getter,
} from '../support/paging.js';
import { callers } from '../support/tokens.js';
import { ids, insertTags, names, rowsOf, TIMES, type Row } from './cursor-support.js';

/** DESIGN 4.2 cursor paging on GET /tags: `next`, `cursor=`, `total=true`, exactly once under concurrent writes. */
let api: TestApi;
let db: DataSource;
let get: Getter;

beforeAll(async () => {
  ({ api, db, get } = await listsApi());
});
afterAll(() => api.close());

const insert = (rows: readonly Row[]): Promise<void> => insertTags(db, rows);

const P = unique('cur');
const N = 23;
const list = (query = ''): string => `/tags?tagName=${encodeURIComponent(P)}${query}`;

beforeAll(() => insert(rowsOf(P, N)));

describe('GET /tags: following next (DESIGN 4.2)', () => {
  it.each([
    [''],
    ['tagName'],
    ['-tagName'],
    ['tagDesc'],
    ['-tagDesc'],
    ['updateTs'],
    ['-updateTs,tagName'],
    ['tagDesc,-updateTs'],
    ['-tagDesc,tagId'],
    ['tagId'],
    ['-tagId'],
    ['updateTs,-tagId'],
  ])('sort=%s: every match once, in the order of one offset page', async (sort) => {
    const url = list(`&sort=${sort}`);
    const all = ids(await onePage(get, url, 'tags'));
    expect(all).toHaveLength(N);
    const { items, pages } = await followCursors(get, url, 'tags', 4);
    expect(ids(items)).toEqual(all);
    expect(pages).toHaveLength(Math.ceil(N / 4));
    expect(pages[0]?.total).toBe(N);
    // A page fetched by cursor carries no total unless asked for.
    expect(pages.slice(1).map((p) => p.total)).toEqual(pages.slice(1).map(() => undefined));
  });

  it('limit may change between pages', async () => {
    const all = ids(await onePage(get, list('&sort=-tagDesc'), 'tags'));
    const sizes = [2, 5, 1, 7, 3];
    const { items } = await followCursors(get, list('&sort=-tagDesc'), 'tags', (page) => sizes[page % sizes.length]);
    expect(ids(items)).toEqual(all);
  });

  it('an offset page answers next too; following it gives the rest', async () => {
    const all = ids(await onePage(get, list('&sort=tagDesc,updateTs'), 'tags'));
    const first = await pageAt(get, list('&sort=tagDesc,updateTs&offset=5&limit=4'));
    expect(first.total).toBe(N);
    const rest = await followCursors(get, list('&sort=tagDesc,updateTs'), 'tags', 6, { from: first.next });
    expect([...ids(first.tags as unknown[]), ...ids(rest.items)]).toEqual(all.slice(5));
  });

  it('a last page has no next, also when it is exactly full', async () => {
    expect((await pageAt(get, list(`&limit=${N}`))).next).toBeUndefined();
    expect((await pageAt(get, list(`&limit=${N - 1}`))).next).toEqual(expect.any(String));
    expect(await pageAt(get, `/tags?tagName=${unique('none')}`)).toEqual({ total: 0, tags: [] });
  });

  it('total=true counts on a cursor page; total=false leaves it out of an offset page', async () => {
    const first = await pageAt(get, list('&limit=3&total=false'));
    expect(first.total).toBeUndefined();
    expect(first.tags).toHaveLength(3);
    const second = await pageAt(get, list(`&limit=3&cursor=${first.next}&total=true`));
    expect(second.total).toBe(N);
    const third = await pageAt(get, list(`&limit=3&cursor=${second.next}&total=false`));
    expect(third.total).toBeUndefined();
    expectCursorRefused(await get(list('&total=yes')), 'yes', 'total');
  });

  it('include=usage does not change the list: its cursor continues the plain one', async () => {
    const first = await pageAt(get, list('&limit=5'));
    const next = await pageAt(get, list(`&limit=5&include=usage&cursor=${first.next}`));
    expect(ids(next.tags as unknown[])).toEqual(ids(await onePage(get, list(), 'tags')).slice(5, 10));
  });
});

describe('GET /tags: refused cursors are 400 on cursor, never echoed, never a 5xx', () => {
  let good: string;
  beforeAll(async () => {
    good = (await pageAt(get, list('&limit=2&sort=updateTs'))).next!;
  });
  const sorted = (cursor: string, extra = ''): string => list(`&sort=updateTs&cursor=${cursor}${extra}`);

  it('both offset and cursor', async () => {
    expectCursorRefused(await get(sorted(good, '&offset=0')), good);
    expectCursorRefused(await get(sorted(good, '&offset=4')), good);
  });

  it('malformed: not base64url JSON, a wrong shape, wrong kinds of values, too long, repeated', async () => {
    const inside = insideOf(good);
    const [time, id] = inside.k as [string, string];
    const malformed = [
      'not-a-cursor',
      '%25%25%25',
      cursorOf({ v: 1 }),
      cursorOf([inside]),
      cursorOf({ ...inside, v: 2 }),
      cursorOf({ ...inside, extra: true }),
      cursorOf({ ...inside, k: [id] }),
      cursorOf({ ...inside, k: [time, id, id] }),
      cursorOf({ ...inside, k: [12, id] }),
      cursorOf({ ...inside, k: [time, null] }),
      cursorOf({ ...inside, k: [time, 'a\u0000b'] }),
      cursorOf({ ...inside, k: ['2026-02-30T00:00:00.000000Z', id] }),
      cursorOf({ ...inside, k: ['2026-01-01T00:00:60.000000Z', id] }),
      cursorOf({ ...inside, k: ['0000-01-01T00:00:00.000000Z', id] }),
      cursorOf({ ...inside, k: ['2026-01-01 00:00:00', id] }),
      cursorOf({ ...inside, k: [{ time }, id] }),
      good.slice(0, -3),
      `${good}AA`,
      'A'.repeat(8001),
    ];
    for (const cursor of malformed) expectCursorRefused(await get(sorted(cursor)), cursor);
    expectCursorRefused(await get(`${sorted(good)}&cursor=${good}`), good);
  });

  it('made for another filter or sort (limit may change)', async () => {
    expect((await get(sorted(good, '&limit=9'))).statusCode).toBe(200);
    expectCursorRefused(await get(list(`&sort=-updateTs&cursor=${good}`)), good);
    expectCursorRefused(await get(list(`&cursor=${good}`)), good);
    expectCursorRefused(await get(sorted(good, '&q=a')), good);
    expectCursorRefused(await get(sorted(good, '&hostId=h1')), good);
    expectCursorRefused(await get(`/tags?sort=updateTs&cursor=${good}`), good);
  });

  it('made for another list', async () => {
    const host = unique('hc');
    const admin = await callers.admin();
    for (const schemaName of ['a', 'b']) {
      const res = await call(api, 'POST', '/schemas', { token: admin, body: { schemaName, hostId: host } });
      expect(res.statusCode).toBe(201);
    }
    const schemas = (await pageAt(get, `/schemas?hostId=${host}&limit=1&sort=updateTs`)).next!;
    expectCursorRefused(await get(sorted(schemas)), schemas);
    // Its shape is a tag cursor's (a time and an id): only the list it names tells them apart.
    expectCursorRefused(await get(sorted(cursorOf({ ...insideOf(schemas), l: 'tags' }))), schemas);
  });
});

describe('GET /tags: concurrent writes between pages', () => {
  it('rows written after the cursor appear, before it do not, and none repeats (default order)', async () => {
    const Q = unique('cc');
    const s = Q.slice(-8);
    const row = (key: string, desc: string | null = null): Row => ({
      id: `${s}${key}`,
      name: `${Q} ${key}`,
      desc,
      ts: TIMES[0],
    });
    const keys = Array.from({ length: 12 }, (_, i) => `m${String(i).padStart(2, '0')}`);
    await insert(keys.map((k) => row(k)));
    const { items } = await followCursors(get, `/tags?tagName=${Q}`, 'tags', 4, {
      between: async (page) => {
        if (page === 1) {
          // Before the cursor (m03), after it, and at the end; the cursor's own row goes away.
          await insert([row('a-early'), row('m05b'), row('z-late')]);
          await db.query(`delete from tag where tag_id = $1`, [`${s}m03`]);
          // Another row changes, though not where it sorts.
          await db.query(`update tag set tag_desc = 'changed', update_ts = now() where tag_id = $1`, [`${s}m09`]);
        }
        if (page === 2) await insert([row('m01b'), row('m07b')]);
      },
    });
    const expected = [...keys.slice(0, 6), 'm05b', ...keys.slice(6, 8), 'm07b', ...keys.slice(8), 'z-late'];
    expect(names(items)).toEqual(expected.map((k) => `${Q} ${k}`));
  });

  it('with equal sort values the id decides: an insert beside the cursor lands on its side of it', async () => {
    const Q = unique('ct');
    const s = Q.slice(-8);
    const row = (key: string): Row => ({ id: `${s}${key}`, name: `${Q} ${key}`, desc: 'same', ts: TIMES[1] });
    const keys = Array.from({ length: 9 }, (_, i) => `k${String(i).padStart(2, '0')}`);
    await insert(keys.map(row));
    const { items } = await followCursors(get, `/tags?tagName=${Q}&sort=tagDesc,-updateTs`, 'tags', 3, {
      between: async (page) => {
        if (page === 1) await insert([row('k01a'), row('k02a'), row('k05a')]);
      },
    });
    expect(ids(items)).toEqual(
      [...keys.slice(0, 3), 'k02a', ...keys.slice(3, 6), 'k05a', ...keys.slice(6)].map((k) => `${s}${k}`),
    );
  });
});
