import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { type DataSource, type EntityManager } from 'typeorm';
import { Keyset, TagRepository, Tx, type KeyValue, type SortOrder, type TagSortKey } from '#database';
import { unique, type TestApi } from '../support/api.js';
import { followCursors, insideOf, listsApi, type Getter } from '../support/paging.js';
import { explainAnalyze, StatementsOfTags, type AnalyzedPlanNode } from '../support/plan.js';
import { assertProperty } from '../support/property.js';
import { ids, insertTags, TIMES } from './cursor-support.js';

/**
 * DESIGN 4.2 on a nullable first sort key (`sort=tagDesc`, `-tagDesc`): a cursor page deep in 20,000 tags is
 * read as index ranges of ix_tag_desc_keyset (Keyset.afterBranches), about a page of rows and no more than the
 * first page reads, where the single OR-with-`is null` condition read every row before it; and following cursors,
 * through rows with a NULL description too, visits every tag once in the order of one SQL `order by`.
 */
const TAGS = 20_000;
const LIMIT = 20;

/** Rows the plan's scans of `tag` read: those they returned and those their filters dropped. */
const rowsRead = (plan: AnalyzedPlanNode[]): number =>
  plan
    .filter((node) => node['Relation Name'] === 'tag')
    .reduce(
      (sum, node) =>
        sum +
        (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) *
          node['Actual Loops'],
      0,
    );

type Branches = ReturnType<Keyset['afterBranches']>;

/** The keyset as it was before branches: `after()` as one condition (the statement these specs improve on). */
class OneCondition extends Keyset {
  override afterBranches(values: readonly KeyValue[], bind: (value: KeyValue) => string): Branches {
    return [{ where: this.after(values, bind), orderBy: this.orderBy() }];
  }
}

/** Each sort with its ORDER BY spelt independently of the keyset, as the reference order. */
const ORDERS: Record<string, string> = {
  tagDesc: 'lower(tag_desc), tag_id',
  '-tagDesc': 'lower(tag_desc) desc, tag_id',
  'tagDesc,-updateTs': 'lower(tag_desc), update_ts desc, tag_id',
  '-tagDesc,tagName': 'lower(tag_desc) desc, lower(tag_name), tag_id',
};

const sortOf = (sort: string): SortOrder<TagSortKey>[] =>
  sort.split(',').map((key) => ({ key: key.replace(/^-/, '') as TagSortKey, descending: key.startsWith('-') }));

let api: TestApi;
let db: DataSource;
let get: Getter;
const prefix = unique('nd').slice(3, 9);

beforeAll(async () => {
  ({ api, db, get } = await listsApi());
  // A fifth NULL; the rest mixed case (equal under lower()), repeated, some empty; times a microsecond apart.
  await db.query(
    `insert into tag (tag_id, tag_name, tag_desc, update_ts, aggregate_version)
     select $1 || case when i % 2 = 0 then '-' else '_' end || i, $1 || ' n' || i,
            case when i % 5 = 0 then null when i % 1000 = 1 then ''
                 else (array['Alpha', 'alpha', 'Beta', 'ärger', 'zed', 'Zed'])[1 + i % 6] || ' ' || (i % 997) end,
            timestamptz '2026-01-01T00:00:00Z' + (i % 7) * interval '1 microsecond', 1
     from generate_series(0, $2::int - 1) i`,
    [prefix, TAGS],
  );
  await db.query('vacuum analyze tag');
}, 120_000);

afterAll(async () => {
  await db.query(`delete from tag where tag_name like $1`, [`${prefix} n%`]);
  await api.close();
});

describe('a cursor page on a nullable first sort key reads index ranges (DESIGN 4.2)', () => {
  /**
   * The page statement of `keyset` after `values` (the first page without), its plan and the rows it read, in
   * the transaction of `manager`.
   */
  async function explained(manager: EntityManager, keyset: Keyset, after: KeyValue[] | undefined) {
    const tags = new StatementsOfTags(db);
    const window = { offset: 0, after, limit: LIMIT, withTotal: true };
    const page = await tags.in(Tx.of(manager)).page({ visibility: { allHosts: true } }, keyset, window);
    const [sql, parameters] = tags.sent[0];
    const plan = await explainAnalyze(manager, sql, parameters);
    return { page, plan, read: rowsRead(plan) };
  }

  /** The keys of the row three quarters into those with (or without) a description, in `keyset`'s order. */
  async function deepKeys(keyset: Keyset, withNull: boolean): Promise<KeyValue[]> {
    const where = `tag_name like $1 and tag_desc is ${withNull ? '' : 'not '}null`;
    const [{ n }] = await db.query<[{ n: number }]>(`select count(*)::int as n from tag t where ${where}`, [
      `${prefix} n%`,
    ]);
    const [row] = await db.query<object[]>(
      `select ${keyset.select()} from tag t where ${where} order by ${keyset.orderBy()} offset $2 limit 1`,
      [`${prefix} n%`, Math.floor((n * 3) / 4)],
    );
    return keyset.keysOf(row);
  }

  // Whether the single condition scanned: on a NULL ascending, `false or (... is null and ...)` was a range already.
  it.each([
    ['tagDesc', 'a description', true],
    ['tagDesc', 'a NULL description', false],
    ['-tagDesc', 'a description', true],
    ['-tagDesc', 'a NULL description', true],
  ])('sort=%s, cursor on %s: index scans of about a page, as the first page', async (sort, kind, scanned) => {
    const keyset = api.app.get(TagRepository).keyset(sortOf(sort));
    const after = await deepKeys(keyset, kind !== 'a description');
    expect(after[0] === null).toBe(kind !== 'a description');
    // One snapshot: other spec files write tags meanwhile, and each total counts all of them.
    const [first, deep, before] = await db.transaction('REPEATABLE READ', async (manager) => [
      await explained(manager, keyset, undefined),
      await explained(manager, keyset, after),
      await explained(manager, new OneCondition(keyset.columns), after),
    ]);
    const figures = { sort, kind, first: first.read, deep: deep.read, before: before.read };
    // Same page as the single condition gives, total counted once (an InitPlan), next from its last row.
    expect(ids(deep.page.rows)).toEqual(ids(before.page.rows));
    expect(deep.page.rows).toHaveLength(LIMIT);
    expect(deep.page.total).toBe(before.page.total);
    expect(deep.page.next).toEqual(before.page.next);
    expect(deep.plan.filter((n) => n['Parent Relationship'] === 'InitPlan').map((n) => n['Actual Loops'])).toEqual([1]);
    // Each scan of tag is a range of the description index: an index condition, not a walk from the start.
    const scans = deep.plan.filter((node) => node['Relation Name'] === 'tag');
    expect(scans).not.toEqual([]);
    const ranges = scans.map((node) => [node['Index Name'], node['Index Cond'] !== undefined]);
    expect(ranges).toEqual(scans.map(() => ['ix_tag_desc_keyset', true]));
    // Two branches of limit + 1 rows, and the rest of a group of equal descriptions that the id orders.
    expect({ ...figures, deep: deep.read <= 3 * (LIMIT + 1) }).toEqual({ ...figures, deep: true });
    expect({ ...figures, deep: deep.read <= 2 * first.read + 2 }).toEqual({ ...figures, deep: true });
    // The first page too: under -tagDesc its NULLs come first, read as their own branch in id order.
    expect({ ...figures, first: first.read <= 3 * (LIMIT + 1) }).toEqual({ ...figures, first: true });
    // Not vacuous: the single condition read the rows before the cursor (or, -tagDesc, every NULL one).
    expect({ ...figures, before: before.read > 2_000 }).toEqual({ ...figures, before: scanned });
  });
});

describe('following cursors on a nullable first sort key: every tag once, in SQL order', () => {
  const sizes = [997, 1, 500, 1000, 3];

  it.each(Object.keys(ORDERS))(
    'sort=%s over 20,000 tags, through cursors on NULL descriptions',
    async (sort) => {
      const expected = await db.query<{ tag_id: string }[]>(
        `select tag_id from tag where tag_name like $1 order by ${ORDERS[sort]}`,
        [`${prefix} n%`],
      );
      const url = `/tags?tagName=${prefix}%20n&sort=${sort}&total=true`;
      const { items, pages } = await followCursors(get, url, 'tags', (page) => sizes[page % sizes.length] ?? 1);
      expect(ids(items)).toEqual(expected.map((row) => row.tag_id));
      expect(pages.map((page) => page.total)).toEqual(pages.map(() => TAGS));
      const leads = pages.flatMap((page) => (page.next === undefined ? [] : [insideOf(page.next).k[0]]));
      expect(leads).toContainEqual(null);
      expect(leads).toContainEqual(expect.any(String));
    },
    120_000,
  );

  it('for any descriptions, sort and page size (property)', async () => {
    const descriptions = fc.oneof(
      { weight: 2, arbitrary: fc.constant(null) },
      { weight: 3, arbitrary: fc.constantFrom('a', 'A', 'b', '', 'ä', 'Z', 'a b') },
    );
    await assertProperty(
      'nullable first key cursor paging',
      fc.asyncProperty(
        fc.array(fc.tuple(descriptions, fc.nat({ max: TIMES.length - 1 })), { maxLength: 24 }),
        fc.constantFrom(...Object.keys(ORDERS)),
        fc.integer({ min: 1, max: 5 }),
        async (drawn, sort, limit) => {
          const own = unique('np');
          const short = own.slice(-8);
          await insertTags(
            db,
            drawn.map(([desc, ts], i) => ({
              id: `${short}${i % 2 === 0 ? '-' : '_'}${i}`,
              name: `${own} ${i}`,
              desc,
              ts: TIMES[ts] ?? TIMES[0],
            })),
          );
          try {
            const expected = await db.query<{ tag_id: string }[]>(
              `select tag_id from tag where tag_name like $1 order by ${ORDERS[sort]}`,
              [`${own} %`],
            );
            const { items } = await followCursors(get, `/tags?tagName=${own}&sort=${sort}`, 'tags', limit);
            expect(ids(items)).toEqual(expected.map((row) => row.tag_id));
          } finally {
            await db.query(`delete from tag where tag_name like $1`, [`${own} %`]);
          }
        },
      ),
      60,
    );
  }, 120_000);
});
