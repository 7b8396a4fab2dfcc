import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource, EntityManager, ObjectLiteral, SelectQueryBuilder } from 'typeorm';
import { EntityLinkRepository, EntityRepository, queryObserver, TagRepository, Tx } from '#database';
import { principalOf } from '#token-binding';
import { visibilityOf } from '../../apps/api/common/host-access.js';
import { ENTITY_TYPES } from '../../apps/api/catalog/entity-types.js';
import { startApi, unique, type TestApi } from '../support/api.js';
import { explain, type PlanNode } from '../support/plan.js';
import { token } from '../support/tokens.js';
import { As, dataSource, ENTITY_CASES, type EntityCase } from './support.js';

const TAGS = 200;
const ENTITIES = 40_000;
/** Each entity carries 3 of the 200 tags: 120k links per type, 360k in all. */
const LINKS_PER_ENTITY = 3;

async function planOf(db: DataSource, query: SelectQueryBuilder<ObjectLiteral>): Promise<PlanNode[]> {
  const [sql, parameters] = query.getQueryAndParameters();
  return explain(db, sql, parameters);
}

/**
 * entity_tag is reached through ix_entity_tag_tag (tag_id first), never read sequentially. The primary
 * key (entity_type first) would also be an index scan, but over every link of the type.
 */
function expectIndexedLinks(plan: PlanNode[]): void {
  const onLinks = plan.filter(
    (n) => n['Relation Name'] === 'entity_tag' || /^(ix|pk)_entity_tag/.test(n['Index Name'] ?? ''),
  );
  expect(onLinks.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
  expect(onLinks).toContainEqual(
    expect.objectContaining({
      'Node Type': expect.stringMatching(/^(Index Scan|Index Only Scan|Bitmap Index Scan)$/),
      'Index Name': 'ix_entity_tag_tag',
    }),
  );
}

/**
 * A page in the list's default order may instead walk that order's index (migration KeysetIndexes) and
 * stop once the page is full, probing each entity's own links through the primary key with the entity
 * bound (one entity's range, never every link of the type); otherwise it is driven by ix_entity_tag_tag.
 */
function expectIndexedOrProbedLinks(plan: PlanNode[], table: string): void {
  const walk = plan.some((n) => n['Index Name'] === `ix_${table}_${table === 'document' ? 'title' : 'name'}_keyset`);
  const probes = plan.filter((n) => n['Index Name'] === 'pk_entity_tag');
  if (!walk || probes.length === 0) return expectIndexedLinks(plan);
  expect(plan.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
  for (const probe of probes) expect(probe['Index Cond']).toMatch(/entity_id = /);
}

let api: TestApi;
let db: DataSource;
const host = unique('hp');
const prefix = unique('p').slice(2, 8);
const tagName = (i: number): string => `${prefix}-plan-${i}`;
const claims = { sub: 'planner', scope: 'portal.r', host };
const principal = principalOf(claims);

beforeAll(async () => {
  api = await startApi();
  db = dataSource(api);
  // The api's pool stops a statement after DB_STATEMENT_TIMEOUT_MS (5 s): seeding on a busy machine takes longer.
  await db.transaction((seed) => seedTables(seed));
  for (const c of ENTITY_CASES) await db.query(`analyze ${c.table}`);
  await db.query('analyze entity_tag');
  await db.query('analyze tag');
}, 120_000);

async function seedTables(seed: EntityManager): Promise<void> {
  await seed.query('set local statement_timeout = 0');
  await seed.query(
    `insert into tag (tag_id, tag_name, update_ts, aggregate_version)
     select $1 || 't' || i, $1 || '-plan-' || i, now(), 1 from generate_series(0, $2::int - 1) i`,
    [prefix, TAGS],
  );
  for (const c of ENTITY_CASES) {
    await seed.query(
      `insert into ${c.table} (${c.table}_id, host_id, ${snake(c.nameField)}, update_ts, aggregate_version)
       select $1 || i, $2, 'n' || i, now(), 1 from generate_series(0, $3::int - 1) i`,
      [prefix, host, ENTITIES],
    );
    // Tags i, i+67 and i+134 (mod 200): three distinct tags per entity.
    await seed.query(
      `insert into entity_tag (entity_type, entity_id, entity_host_id, tag_id)
       select $1, $2 || i, $6, $2 || 't' || ((i + k * 67) % $3::int)
       from generate_series(0, $4::int - 1) i, generate_series(0, $5::int - 1) k`,
      [c.entityType, prefix, TAGS, ENTITIES, LINKS_PER_ENTITY, host],
    );
  }
}

afterAll(async () => {
  // Deleting the tags cascades to every seeded link.
  await db.query(`delete from tag where tag_id like $1`, [`${prefix}t%`]);
  for (const c of ENTITY_CASES) await db.query(`delete from ${c.table} where host_id = $1`, [host]);
  await api.close();
});

function snake(property: string): string {
  return property.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

describe.each(ENTITY_CASES)('the /$path tag filter on a seeded table', (c: EntityCase) => {
  const def = ENTITY_TYPES.find((d) => d.entityType === c.entityType)!;

  it(`has at least 100k links of its type`, async () => {
    const sql = 'select count(*)::int as n from entity_tag where entity_type = $1';
    const [{ n }] = await db.query<[{ n: number }]>(sql, [c.entityType]);
    expect(n).toBeGreaterThanOrEqual(100_000);
  });

  it.each(['any', 'all'] as const)('tagMatch=%s: page and count queries scan entity_tag by index', async (match) => {
    const tags = await new TagRepository(db)
      .byNamesQuery(visibilityOf(principal), [tagName(1), tagName(68)])
      .getRawMany<{
        tagId: string;
      }>();
    expect(tags).toHaveLength(2);
    const { page, count } = new EntityRepository(db).listQueries(def, {
      visibility: visibilityOf(principal),
      offset: 0,
      limit: 20,
      sort: [{ key: def.sortFields[0], descending: false }],
      tags: { tagIds: tags.map((t) => t.tagId), match },
    });
    expectIndexedOrProbedLinks(await planOf(db, page), c.table);
    expectIndexedLinks(await planOf(db, count));
  });

  it('the service runs exactly these queries, and total counts every match', async () => {
    const names = [tagName(1).toUpperCase(), tagName(68)];
    for (const match of ['any', 'all'] as const) {
      const tags = await new TagRepository(db)
        .byNamesQuery(visibilityOf(principal), names)
        .getRawMany<{ tagId: string }>();
      const { page, count } = new EntityRepository(db).listQueries(def, {
        visibility: visibilityOf(principal),
        offset: 0,
        limit: 20,
        sort: [{ key: def.sortFields[0], descending: false }],
        tags: { tagIds: tags.map((t) => t.tagId), match },
      });
      const as = new As(api, await token(claims));
      const { result: res, statements: seen } = await queryObserver.during(() =>
        as.get(`/${c.path}?tagNames=${names.join(',')}&tagMatch=${match}`),
      );
      expect(res.statusCode).toBe(200);
      for (const query of [new TagRepository(db).byNamesQuery(visibilityOf(principal), names), page, count]) {
        expect(seen).toContain(query.getQueryAndParameters()[0]);
      }
      // Entities carrying tag 1 are i = 1, 68, 134 (mod 200) ... : 3 of every 200; tag 68 likewise.
      const expected = await db.query(
        `select count(*)::int as n from (select entity_id from entity_tag where entity_type = $1 and tag_id = any($2)
         group by entity_id having count(*) >= $3) m`,
        [c.entityType, tags.map((t) => t.tagId), match === 'all' ? 2 : 1],
      );
      expect(res.json<{ total: number }>().total).toBe((expected as [{ n: number }])[0].n);
      expect(res.json<Record<string, unknown[]>>()[c.path]).toHaveLength(20);
    }
  });
});

describe('tag names resolve through uq_tag_name_lower', () => {
  it('the name lookup can be answered by the index on lower(tag_name)', async () => {
    // The tag table is small here, where a sequential scan is rightly cheaper; forbidding it shows the
    // query's shape matches the expression index, which the planner then picks on a large table.
    const plan = await db.transaction(async (tx) => {
      await tx.query('set local enable_seqscan = off');
      const query = new TagRepository(db)
        .in(Tx.of(tx))
        .byNamesQuery(visibilityOf(principal), [tagName(3), tagName(4).toUpperCase()]);
      const [sql, parameters] = query.getQueryAndParameters();
      return explain(tx, sql, parameters);
    });
    expect(plan.map((n) => n['Index Name'])).toContain('uq_tag_name_lower');
    expect(plan.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
  });
});

describe('GET /tags/{tagId}/entities on the seeded links', () => {
  const links = (): EntityLinkRepository => new EntityLinkRepository(db);
  const planOfSql = ([sql, parameters]: [string, unknown[]]): Promise<PlanNode[]> => explain(db, sql, parameters);
  /** The plan of a counter read: `tag_usage` holds a few hundred rows here, where a scan is rightly cheaper. */
  const planOfCount = ([sql, parameters]: [string, unknown[]]): Promise<PlanNode[]> =>
    db.transaction(async (tx) => {
      await tx.query('set local enable_seqscan = off');
      return explain(tx, sql, parameters);
    });
  /** Counts come from the counters (migration TagUsage) through their key: no link and no entity is read. */
  const expectCounters = (plan: PlanNode[]): void => {
    expect(plan.map((n) => n['Index Name'])).toContain('pk_tag_usage');
    expect(plan.filter((n) => n['Node Type'] === 'Seq Scan')).toEqual([]);
    const read = plan.map((n) => n['Relation Name']).filter((r) => r !== undefined);
    expect(read.filter((r) => r !== 'tag_usage')).toEqual([]);
  };
  const tagId = `${prefix}t5`;

  it.each([
    ['a host-bound reader', () => visibilityOf(principal)],
    ['an admin', () => ({ allHosts: true as const })],
  ])(
    'for %s: the page is one scan of ix_entity_tag_tag, the count a read of counters, no entity table',
    async (_, visibility) => {
      // Other test files write links meanwhile; fresh statistics keep the plan the one a settled database gets.
      await db.query('analyze entity_tag');
      for (const entityType of [undefined, 'document']) {
        const { page, count } = links().entitiesOfQueries(ENTITY_TYPES, tagId, visibility(), entityType, 40, 20);
        const plan = await planOfSql(page);
        expect(plan.filter((n) => n['Node Type'] === 'Seq Scan' || n['Node Type'] === 'Sort')).toEqual([]);
        expectIndexedLinks(plan);
        // Visibility comes from the link's own entity_host_id (in the index): no entity table is read.
        expect(plan.filter((n) => ['schema', 'product', 'document'].includes(n['Relation Name'] ?? ''))).toEqual([]);
        expectCounters(await planOfCount(count));
      }
    },
  );

  it('usage counts for a page of tags are one statement reading counters, not links', async () => {
    const tagIds = Array.from({ length: 20 }, (_, i) => `${prefix}t${i}`);
    // Only the statements this call sent: the change-feed pruner may fire meanwhile (it once did, in CI).
    const { statements: seen } = await queryObserver.during(() =>
      links().usage(ENTITY_TYPES, tagIds, visibilityOf(principal)),
    );
    expect(seen).toHaveLength(1);
    expectCounters(await planOfCount([seen[0] ?? '', [tagIds, ENTITY_TYPES.map((d) => d.entityType), host]]));
  });

  it('the service runs exactly these queries and counts every visible entity', async () => {
    const { page, count } = links().entitiesOfQueries(ENTITY_TYPES, tagId, visibilityOf(principal), undefined, 0, 20);
    const as = new As(api, await token(claims));
    const { result: res, statements: seen } = await queryObserver.during(() => as.get(`/tags/${tagId}/entities`));
    expect(res.statusCode).toBe(200);
    expect(seen).toContain(page[0]);
    expect(seen).toContain(count[0]);
    // Tag 5 is on entities i with i, i+67 or i+134 = 5 (mod 200): 3 of every 200, in each of the three types.
    const expected = await db.query<[{ n: number }]>(`select count(*)::int as n from entity_tag where tag_id = $1`, [
      tagId,
    ]);
    expect(res.json<{ total: number }>().total).toBe(expected[0].n);
    expect(expected[0].n).toBeGreaterThan(1000);
  });
});
