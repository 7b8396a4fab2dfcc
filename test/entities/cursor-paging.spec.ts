import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
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
import { assertProperty } from '../support/property.js';

import { createTags, ENTITY_CASES, type EntityCase } from './support.js';

/** DESIGN 4.2 cursor paging on GET /schemas, /products, /documents and GET /tags/{tagId}/entities. */
let api: TestApi;
let db: DataSource;
let get: Getter;
let admin: string;

beforeAll(async () => {
  ({ api, db, get, token: admin } = await listsApi());
});
afterAll(() => api.close());

/** Per type: the name, a nullable sortable field, and their columns. */
const FIELDS: Readonly<Record<string, { opt: string; nameColumn: string; optColumn: string }>> = {
  schema: { opt: 'schemaVersion', nameColumn: 'schema_name', optColumn: 'schema_version' },
  product: { opt: 'productVersion', nameColumn: 'product_name', optColumn: 'product_version' },
  document: { opt: 'contentType', nameColumn: 'title', optColumn: 'content_type' },
};

interface Row {
  readonly id: string;
  readonly name: string;
  readonly opt: string | null;
  readonly ts: string;
}

const TIMES = ['2026-01-01T00:00:00.000001Z', '2026-01-01T00:00:00.000002Z', '2026-01-01T00:00:03Z'];
const NAMES = ['pet', 'Pet', 'PET store', 'älg', 'zoo', '_x', '-y', 'Order'];
const OPTS = [null, '1.0', '1.0', 'A', 'a', null, '', '10'];

async function insert(c: EntityCase, host: string, rows: readonly Row[]): Promise<void> {
  const { nameColumn, optColumn } = FIELDS[c.entityType];
  await db.query(
    `insert into ${c.table} (${c.table}_id, host_id, ${nameColumn}, ${optColumn}, update_ts, aggregate_version)
     select i, $5, n, o, t, 1 from unnest($1::varchar[], $2::varchar[], $3::varchar[], $4::timestamptz[]) as u(i, n, o, t)`,
    [rows.map((r) => r.id), rows.map((r) => r.name), rows.map((r) => r.opt), rows.map((r) => r.ts), host],
  );
}

function rowsOf(host: string, count: number): Row[] {
  const short = host.slice(-8);
  return Array.from({ length: count }, (_, i) => ({
    id: `${short}${i % 2 === 0 ? '-' : '_'}${i}`,
    name: `${NAMES[i % NAMES.length]} ${i % 5}`,
    opt: OPTS[i % OPTS.length] ?? null,
    ts: TIMES[i % TIMES.length],
  }));
}

const idsOf = (c: EntityCase, items: readonly unknown[]): string[] =>
  items.map((e) => (e as Record<string, string>)[c.idField]);

describe.each(ENTITY_CASES)('GET /$path: following next (DESIGN 4.2)', (c) => {
  const host = unique('he');
  const N = 19;
  const { opt } = FIELDS[c.entityType];
  const list = (query = ''): string => `/${c.path}?hostId=${host}${query}`;

  beforeAll(() => insert(c, host, rowsOf(host, N)));

  it.each([
    [''],
    [`-${c.nameField}`],
    [opt],
    [`-${opt},updateTs`],
    [`${opt},-${c.idField}`],
    [`-updateTs,${c.nameField}`],
    [c.idField],
    [`-${c.idField}`],
  ])('sort=%s: every match once, in the order of one offset page', async (sort) => {
    const url = list(`&sort=${sort}`);
    const all = idsOf(c, await onePage(get, url, c.path));
    expect(all).toHaveLength(N);
    const { items, pages } = await followCursors(get, url, c.path, 4);
    expect(idsOf(c, items)).toEqual(all);
    expect(pages[0]?.total).toBe(N);
    expect(pages.slice(1).every((p) => p.total === undefined)).toBe(true);
    expect((await pageAt(get, list(`&sort=${sort}&limit=2&total=true&cursor=${pages[0]?.next}`))).total).toBe(N);
  });

  it('filtered by tag names (any and all): every match once', async () => {
    const [a, b] = [unique('ta'), unique('tb')];
    const [ta, tb] = await createTags(api, [a, b]);
    const ids = rowsOf(host, N).map((r) => r.id);
    for (const [i, id] of ids.entries()) {
      const tagIds = i % 3 === 0 ? [ta, tb] : i % 3 === 1 ? [ta] : [];
      if (tagIds.length > 0) await call(api, 'PUT', `/${c.path}/${id}/tags`, { token: admin, body: { tagIds } });
    }
    for (const query of [`&tagNames=${a}`, `&tagNames=${b},${a}&tagMatch=all`, `&tagNames=${a.toUpperCase()},${b}`]) {
      const all = idsOf(c, await onePage(get, list(`${query}&sort=-${opt}`), c.path));
      expect(all.length).toBeGreaterThan(3);
      const { items } = await followCursors(get, list(`${query}&sort=-${opt}`), c.path, 3);
      expect(idsOf(c, items)).toEqual(all);
    }
    // The same names in another order and case are the same filter; another tagMatch is not.
    const first = await pageAt(get, list(`&tagNames=${a},${b}&limit=2`));
    expect((await get(list(`&tagNames=${b.toUpperCase()},${a}&limit=2&cursor=${first.next}`))).statusCode).toBe(200);
    expectCursorRefused(await get(list(`&tagNames=${a},${b}&tagMatch=all&cursor=${first.next}`)), first.next!);
  });

  it('refuses offset with cursor, a malformed cursor, and one of another list, filter or sort', async () => {
    const good = (await pageAt(get, list('&limit=2'))).next!;
    expectCursorRefused(await get(list(`&offset=0&cursor=${good}`)), good);
    const inside = insideOf(good);
    for (const bad of ['x', cursorOf({ ...inside, k: [1, 2] }), cursorOf({ ...inside, k: inside.k.slice(1) })]) {
      expectCursorRefused(await get(list(`&cursor=${bad}`)), bad);
    }
    expectCursorRefused(await get(list(`&sort=-${c.nameField}&cursor=${good}`)), good);
    expectCursorRefused(await get(`/${c.path}?cursor=${good}`), good);
    const other = ENTITY_CASES.find((o) => o !== c)!;
    expectCursorRefused(await get(`/${other.path}?hostId=${host}&cursor=${good}`), good);
  });

  it('rows inserted after the cursor appear, before it do not, and none repeats', async () => {
    const fresh = unique('hn');
    const s = fresh.slice(-8);
    const row = (key: string): Row => ({ id: `${s}${key}`, name: key, opt: null, ts: TIMES[0] });
    const keys = Array.from({ length: 10 }, (_, i) => `m${i}`);
    await insert(c, fresh, keys.map(row));
    const { items } = await followCursors(get, `/${c.path}?hostId=${fresh}`, c.path, 3, {
      between: async (page) => {
        if (page === 1) await insert(c, fresh, [row('a0'), row('m2b'), row('m5b'), row('z9')]);
        if (page === 2) await insert(c, fresh, [row('m1b'), row('m7b')]);
      },
    });
    const expected = [
      ...keys.slice(0, 3),
      'm2b',
      ...keys.slice(3, 6),
      'm5b',
      ...keys.slice(6, 8),
      'm7b',
      ...keys.slice(8),
      'z9',
    ];
    expect(idsOf(c, items)).toEqual(expected.map((k) => `${s}${k}`));
  });
});

describe('GET /tags/{tagId}/entities: following next', () => {
  let tagId: string;
  let other: string;
  const hosts = ENTITY_CASES.map(() => unique('hr'));
  beforeAll(async () => {
    [tagId, other] = await createTags(api, [unique('rev'), unique('rev')]);
    for (const [i, c] of ENTITY_CASES.entries()) {
      const rows = rowsOf(hosts[i], 9);
      await insert(c, hosts[i], rows);
      for (const row of rows) {
        await call(api, 'PUT', `/${c.path}/${row.id}/tags`, { token: admin, body: { tagIds: [tagId, other] } });
      }
    }
  });

  it.each([[''], ['&entityType=document'], ['&entityType=schema']])(
    '%s: every link once, by type then id',
    async (q) => {
      const url = `/tags/${tagId}/entities?${q}`;
      const all = await onePage(get, url, 'entities');
      expect(all.length).toBe(q === '' ? 27 : 9);
      const { items, pages } = await followCursors(get, url, 'entities', 4);
      expect(items).toEqual(all);
      expect(pages[0]?.total).toBe(all.length);
      expect(pages.slice(1).every((p) => p.total === undefined)).toBe(true);
    },
  );

  it('links added after the cursor appear, before it do not', async () => {
    const url = `/tags/${other}/entities?entityType=product`;
    const product = ENTITY_CASES.find((c) => c.entityType === 'product')!;
    const host = unique('hl');
    const [early, late] = [`0000${host.slice(-8)}`, `zzzz${host.slice(-8)}`];
    const { items } = await followCursors(get, url, 'entities', 2, {
      between: async (page) => {
        if (page !== 1) return;
        for (const id of [early, late]) {
          await insert(product, host, [{ id, name: id, opt: null, ts: TIMES[0] }]);
          await call(api, 'PUT', `/products/${id}/tags`, { token: admin, body: { tagIds: [other] } });
        }
      },
    });
    const now = (await onePage(get, url, 'entities')) as { entityId: string }[];
    // The early link sorts before the first page's cursor, the late one after it.
    expect(now.findIndex((e) => e.entityId === early)).toBeLessThan(2);
    expect(now.findIndex((e) => e.entityId === late)).toBeGreaterThan(2);
    expect(items).toEqual(now.filter((e) => e.entityId !== early));
  });

  it('refuses a cursor of another tag, another entityType, or another list', async () => {
    const good = (await pageAt(get, `/tags/${tagId}/entities?limit=2`)).next!;
    expect((await get(`/tags/${tagId}/entities?limit=7&cursor=${good}`)).statusCode).toBe(200);
    expectCursorRefused(await get(`/tags/${other}/entities?cursor=${good}`), good);
    expectCursorRefused(await get(`/tags/${tagId}/entities?entityType=schema&cursor=${good}`), good);
    expectCursorRefused(await get(`/tags/${tagId}/entities?offset=2&cursor=${good}`), good);
    expectCursorRefused(await get(`/schemas?cursor=${good}`), good);
    // Bad input is answered before whether the tag exists (DESIGN 3's order).
    expectCursorRefused(await get('/tags/NoSuchTag/entities?cursor=x'), 'x');
  });
});

describe('entity lists: exactly once, for any rows, sort and limit (property)', () => {
  it('following next from the first page equals one offset page', async () => {
    const arbitraries = [
      fc.constantFrom(...ENTITY_CASES),
      fc.array(fc.record({ name: fc.constantFrom(...NAMES), opt: fc.constantFrom(...OPTS), ts: fc.nat({ max: 2 }) }), {
        maxLength: 16,
      }),
      fc.tuple(fc.shuffledSubarray([0, 1, 2, 3]), fc.array(fc.boolean(), { minLength: 4, maxLength: 4 })),
      fc.integer({ min: 1, max: 5 }),
    ] as const;
    await assertProperty(
      'entity cursor paging',
      fc.asyncProperty(...arbitraries, async (c, drawn, [keys, down], limit) => {
        const host = unique('hp');
        const short = host.slice(-8);
        const fields = [c.nameField, FIELDS[c.entityType].opt, 'updateTs', c.idField];
        const sort = keys.map((k, i) => `${down[i] ? '-' : ''}${fields[k]}`).join(',');
        await insert(
          c,
          host,
          drawn.map((r, i) => ({ id: `${short}${i % 2 ? '_' : '-'}${i}`, name: r.name, opt: r.opt, ts: TIMES[r.ts] })),
        );
        const url = `/${c.path}?hostId=${host}&sort=${sort}`;
        const all = idsOf(c, await onePage(get, url, c.path));
        expect(all).toHaveLength(drawn.length);
        expect(idsOf(c, (await followCursors(get, url, c.path, limit)).items)).toEqual(all);
      }),
      30,
    );
  }, 120_000);
});
