import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { type TagFilter } from '#database';
import { likePattern } from '#platform';
import { startApi, unique, type TestApi } from '../support/api.js';
import { explain, explainAnalyze, StatementsOfTags } from '../support/plan.js';

/**
 * Substring search (`q`, `tagName`, `tagDesc`, DESIGN 4.2) is served by the trigram indexes of migration
 * TagTrigram (docs/performance.md): on 20,000 seeded tags a rare substring is found through them, the table
 * is not read in full, and the answer is the same as PostgreSQL's sequential scan gives.
 */
const TAGS = 20_000;

let api: TestApi;
let db: DataSource;
const prefix = unique('tg').slice(3, 9);
const rare = `zq${prefix}x`;

beforeAll(async () => {
  api = await startApi();
  db = api.app.get(DataSource);
  // Every 1,000th tag carries the rare substring in its name, every 1,000th (offset by 500) in its description.
  await db.query(
    `insert into tag (tag_id, tag_name, tag_desc, update_ts, aggregate_version)
     select $1 || 't' || i,
            $1 || '-name-' || i || case when i % 1000 = 0 then '-' || $2 else '' end,
            'description ' || i || case when i % 1000 = 500 then ' ' || upper($2) else '' end,
            now(), 1
     from generate_series(0, $3::int - 1) i`,
    [prefix, rare, TAGS],
  );
  // Vacuum moves the rows out of the GIN indexes' pending list, as autovacuum would: the planner prices it.
  await db.query('vacuum analyze tag');
}, 120_000);

afterAll(async () => {
  await db.query(`delete from tag where tag_id like $1`, [`${prefix}t%`]);
  await api.close();
});

/** The page statement `filter` sends, its plan, and its rows' ids; and the same with sequential scans only. */
async function searched(filter: Omit<TagFilter, 'visibility'>) {
  const tags = new StatementsOfTags(db);
  const keyset = tags.keyset([{ key: 'tagName', descending: false }]);
  const page = await tags.page({ visibility: { allHosts: true }, ...filter }, keyset, {
    offset: 0,
    limit: 100,
    withTotal: true,
  });
  const [sql, parameters] = tags.sent[0];
  const plan = await explain(db, sql, parameters);
  const runner = db.createQueryRunner();
  try {
    await runner.startTransaction();
    await runner.query('set local enable_indexscan = off');
    await runner.query('set local enable_bitmapscan = off');
    const scanned = (await runner.query(sql, [...parameters])) as { tag_id: string }[];
    await runner.rollbackTransaction();
    return { page, plan, scanned: scanned.slice(0, 100).map((r) => r.tag_id) };
  } finally {
    await runner.release();
  }
}

describe('tag substring search and description order by index (migrations TagTrigram, TagDescOrder)', () => {
  it('the migration made both indexes (pg_trgm ships with both test servers)', async () => {
    const rows = await db.query<{ indexname: string }[]>(
      `select indexname from pg_indexes where tablename = 'tag' and indexname like 'ix_tag_%_trgm' order by 1`,
    );
    expect(rows.map((r) => r.indexname)).toEqual(['ix_tag_desc_trgm', 'ix_tag_name_trgm']);
  });

  it.each([
    ['tagName', { tagName: likePattern(rare.toUpperCase()) }, ['ix_tag_name_trgm'], 20],
    ['tagDesc', { tagDesc: likePattern(rare) }, ['ix_tag_desc_trgm'], 20],
    ['q', { q: likePattern(rare) }, ['ix_tag_name_trgm', 'ix_tag_desc_trgm'], 40],
  ] as const)(
    '%s: a rare substring is found through its index, as a full scan finds it',
    async (_, filter, indexes, n) => {
      const { page, plan, scanned } = await searched(filter);
      for (const index of indexes) expect(plan.map((node) => node['Index Name'])).toContain(index);
      expect(plan.filter((node) => node['Node Type'] === 'Seq Scan' && node['Relation Name'] === 'tag')).toEqual([]);
      expect(page.total).toBe(n);
      expect(page.rows.map((t) => t.tagId)).toEqual(scanned);
    },
  );

  it.each([false, true])(
    'sort=tagDesc (descending: %s) reads ix_tag_desc_keyset in order, no sort of every tag',
    async (descending) => {
      const tags = new StatementsOfTags(db);
      const keyset = tags.keyset([{ key: 'tagDesc', descending }]);
      await tags.page({ visibility: { allHosts: true } }, keyset, { offset: 0, limit: 20, withTotal: false });
      const [sql, parameters] = tags.sent[0];
      const plan = await explainAnalyze(db, sql, parameters);
      expect(plan.map((node) => node['Index Name'])).toContain('ix_tag_desc_keyset');
      expect(plan.filter((node) => node['Node Type'] === 'Seq Scan')).toEqual([]);
      // Ties on the description go in id order by an incremental sort, and NULLs first (descending) are read as
      // their own branch: the only full Sort is of the two branches' 21 rows each, never of every tag.
      const sortInputs = plan
        .filter((node) => node['Node Type'] === 'Sort')
        .map((node) => node.Plans?.[0]?.['Actual Rows']);
      expect(sortInputs.filter((rows) => (rows ?? Infinity) > 2 * 21)).toEqual([]);
    },
  );

  it('LIKE wildcards in the text stay literal through the index: `%` matches only a `%`', async () => {
    const { page } = await searched({ tagName: likePattern(`${prefix}-name-1%`) });
    expect(page.total).toBe(0);
  });
});
