import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { DataSource } from 'typeorm';
import { Keyset, TagRepository, type KeyValue } from '#database';
import { likePattern } from '#platform';
import { call, startApi, unique, type TestApi } from '../support/api.js';
import { followCursors, onePage, type Getter } from '../support/paging.js';
import { assertProperty } from '../support/property.js';
import { callers } from '../support/tokens.js';
import { DESCS, ids, insertTags, rowsOf, TIMES, WORDS, type Row } from './cursor-support.js';

/** DESIGN 4.2: following `next` on GET /tags visits every match exactly once, whatever the rows, sort and limit. */
let api: TestApi;
let db: DataSource;
let get: Getter;

beforeAll(async () => {
  api = await startApi();
  db = api.app.get(DataSource);
  const admin = await callers.admin();
  get = (url) => call(api, 'GET', url, { token: admin });
});
afterAll(() => api.close());

const insert = (rows: readonly Row[]): Promise<void> => insertTags(db, rows);

describe('GET /tags: exactly once, for any rows, sort and limit (property)', () => {
  const KEYS = ['tagName', 'tagDesc', 'updateTs', 'tagId'];
  const arbitraries = {
    rows: fc.array(
      fc.record({
        word: fc.constantFrom(...WORDS),
        desc: fc.constantFrom(...DESCS, 'ä', 'A'),
        ts: fc.nat({ max: TIMES.length - 1 }),
      }),
      { maxLength: 20 },
    ),
    sort: fc
      .tuple(fc.shuffledSubarray(KEYS), fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }))
      .map(([keys, down]) => keys.map((k, i) => `${down[i] ? '-' : ''}${k}`).join(',')),
    limit: fc.integer({ min: 1, max: 6 }),
  };

  it('following next from the first page equals one offset page', async () => {
    await assertProperty(
      'tag cursor paging',
      fc.asyncProperty(arbitraries.rows, arbitraries.sort, arbitraries.limit, async (drawn, sort, limit) => {
        const prefix = unique('pp');
        const short = prefix.slice(-8);
        await insert(
          drawn.map((r, i) => ({
            id: `${short}${i % 3 === 0 ? '_' : '-'}${i}`,
            name: `${prefix} ${r.word} ${i}`,
            desc: r.desc,
            ts: TIMES[r.ts],
          })),
        );
        try {
          const url = `/tags?tagName=${prefix}&sort=${sort}`;
          const all = ids(await onePage(get, url, 'tags'));
          expect(all).toHaveLength(drawn.length);
          const { items, pages } = await followCursors(get, url, 'tags', limit);
          expect(ids(items)).toEqual(all);
          expect(pages[0]?.total).toBe(drawn.length);
        } finally {
          await db.query(`delete from tag where tag_name like $1`, [`${prefix} %`]);
        }
      }),
      40,
    );
  }, 120_000);

  it('is not vacuous: a keyset without the id as tie-breaker skips rows with equal sort values', async () => {
    const prefix = unique('pv');
    await insert(rowsOf(prefix, 7).map((r) => ({ ...r, desc: 'same' })));
    const tags = api.app.get(TagRepository);
    const filter = { visibility: { allHosts: true as const }, tagName: likePattern(prefix) };
    const keyset = tags.keyset([{ key: 'tagDesc', descending: false }]);
    const walk = async (used: Keyset): Promise<string[]> => {
      const seen: string[] = [];
      let after: KeyValue[] | undefined;
      do {
        const page = await tags.page(filter, used, { offset: 0, after, limit: 2, withTotal: false });
        seen.push(...page.rows.map((t) => t.tagId));
        after = page.next;
      } while (after !== undefined && seen.length < 50);
      return seen;
    };
    expect(new Set(await walk(keyset)).size).toBe(7);
    expect(await walk(keyset)).toHaveLength(7);
    expect((await walk(new Keyset(keyset.columns.slice(0, -1)))).length).toBeLessThan(7);
  });
});
