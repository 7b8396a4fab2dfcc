// 2. Tag filter at scale: GET /schemas?tagNames=a,b on a seeded database vs the same SQL statements
// (built by the product's exported query builders) sent directly through pg; p50/p99 and the plan.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import {
  alternate,
  benchDatabase,
  DIST,
  expectStatuses,
  ROOT,
  load,
  log,
  makeIssuer,
  median,
  percentile,
  profileSummary,
  PROFILE,
  row,
  runBenchmark,
  SMOKE,
  startProduct,
  writeResultFile,
} from './lib.js';

const SIZE = SMOKE
  ? { schemas: 20_000, tags: 1_000, links: 100_000 }
  : { schemas: 1_000_000, tags: 10_000, links: 5_000_000 };
const CONNECTIONS = 8;
const PAIRS = 200;
const ROUNDS = SMOKE ? 1 : 3;
const DURATION_S = SMOKE ? 3 : 10;

// The product's TypeORM (the one its entities registered with), not a copy of the bench's own.
const { DataSource } = await import(pathToFileURL(createRequire(join(ROOT, 'package.json')).resolve('typeorm')).href);
const { dataSourceOptions, EntityLinkRepository, EntityRepository, TagRepository } = await import(
  join(DIST, 'libs/database/index.js')
);
const { principalOf } = await import(join(DIST, 'libs/token-binding/index.js'));
const { visibilityOf } = await import(join(DIST, 'apps/api/common/host-access.js'));
const { ENTITY_TYPES } = await import(join(DIST, 'apps/api/catalog/entity-types.js'));

/**
 * Bulk load with generate_series: entity_tag's indexes and foreign key are dropped during the load and
 * re-created from their own definitions (pg_get_constraintdef / pg_get_indexdef), then VACUUM ANALYZE
 * (what autovacuum would have done on a long-lived database: statistics and the visibility map).
 */
async function seed(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const q = (sql, params) => client.query(sql, params);
  const started = Date.now();
  await q(`set synchronous_commit = off`);
  await q(`set maintenance_work_mem = '512MB'`);
  const perSchema = Math.round(SIZE.links / SIZE.schemas);
  await q(
    `insert into tag (tag_id, tag_name, tag_desc, update_user)
     select 'tg' || g, 'tag-' || g, 'bench tag ' || g, 'bench' from generate_series(0, $1::int - 1) g`,
    [SIZE.tags],
  );
  await q(
    `insert into schema (schema_id, schema_name, schema_version, schema_type, update_user)
     select 'sc' || g, 'schema ' || substr(md5(g::text), 1, 12), '1.0.' || (g % 10), 'json-schema', 'bench'
     from generate_series(0, $1::int - 1) g`,
    [SIZE.schemas],
  );
  const constraints = (
    await q(
      `select conname, pg_get_constraintdef(oid) as def from pg_constraint
       where conrelid = 'entity_tag'::regclass and contype in ('p', 'f') order by contype desc`,
    )
  ).rows;
  const indexes = (
    await q(
      `select indexname, indexdef from pg_indexes where tablename = 'entity_tag'
       and indexname not in (select conname from pg_constraint where conrelid = 'entity_tag'::regclass)`,
    )
  ).rows;
  for (const c of [...constraints].reverse()) await q(`alter table entity_tag drop constraint ${c.conname}`);
  for (const i of indexes) await q(`drop index ${i.indexname}`);
  // Schema g carries tags (g*7 + k*stride) mod T for k < perSchema: distinct, every tag equally used.
  await q(
    `insert into entity_tag (entity_type, entity_id, tag_id)
     select 'schema', 'sc' || g, 'tg' || ((g * 7 + k * ($2::int / $3::int)) % $2::int)
     from generate_series(0, $1::int - 1) g, generate_series(0, $3::int - 1) k`,
    [SIZE.schemas, SIZE.tags, perSchema],
  );
  for (const c of constraints) await q(`alter table entity_tag add constraint ${c.conname} ${c.def}`);
  for (const i of indexes) await q(i.indexdef);
  await q(`vacuum analyze tag`);
  await q(`vacuum analyze schema`);
  await q(`vacuum analyze entity_tag`);
  const counts = (
    await q(
      `select (select count(*) from schema) as schemas, (select count(*) from tag) as tags,
              (select count(*) from entity_tag) as links`,
    )
  ).rows[0];
  await client.end();
  log(
    `seeded ${counts.schemas} schemas, ${counts.tags} tags, ${counts.links} links in ${(Date.now() - started) / 1000} s`,
  );
  return counts;
}

/** A fixed pseudo-random list of tag-name pairs (the same for both sides). */
function pairs() {
  let x = 12345;
  const next = () => (x = (x * 1103515245 + 12345) % 2 ** 31) % SIZE.tags;
  return Array.from({ length: PAIRS }, () => [`tag-${next()}`, `tag-${next()}`]);
}

await runBenchmark(
  'filter',
  'GET /schemas?tagNames=a,b vs the same SQL through pg',
  async () => {
    const db = await benchDatabase('filter');
    const counts = await seed(db.url);
    const issuer = await makeIssuer();
    const api = await startProduct('api', { databaseUrl: db.url, issuer });
    const claims = { sub: 'bench-reader', scope: 'portal.r', host: 'bench-host' };
    const token = await issuer.sign(claims);
    const principal = principalOf(claims);
    const list = pairs();

    // The product's own query builders produce the SQL; pg runs it (TypeORM only builds the text).
    const source = new DataSource(dataSourceOptions({ url: db.url, poolSize: 1 }));
    await source.initialize();
    const visibility = visibilityOf(principal);
    const tagsNamed = (names) => new TagRepository(source).byNamesQuery(visibility, names);
    const def = ENTITY_TYPES.find((t) => t.entityType === 'schema');
    const sort = [{ key: def.sortFields[0], descending: false }];
    const statements = (tagIds) =>
      new EntityRepository(source).listQueries(def, {
        visibility,
        offset: 0,
        limit: 20,
        sort,
        tags: { tagIds, match: 'any' },
      });
    // The service's last statement (tag ids of the page's entities): EntityLinkRepository.tagIdsOf's own query.
    const linksOf = (ids) =>
      new EntityLinkRepository(source).tagIdsQuery(def.entityType, ids, visibility).getQueryAndParameters();
    const pool = new pg.Pool({ connectionString: db.url, max: 10 });
    // Cleanup drops the database under idle clients: that must not hide the error that started the cleanup.
    pool.on('error', () => undefined);
    const idColumn = 'e_schema_id';

    /** One list request's statements, in the service's order: names, then page + count together, then links. */
    async function direct([a, b]) {
      const [namesSql, namesParams] = tagsNamed([a, b]).getQueryAndParameters();
      const found = (await pool.query(namesSql, namesParams)).rows.map((r) => r.tagId);
      if (found.length === 0) return 0;
      const { page, count } = statements(found);
      const [pageSql, pageParams] = page.getQueryAndParameters();
      const [countSql, countParams] = count.getQueryAndParameters();
      const [rows] = await Promise.all([pool.query(pageSql, pageParams), pool.query(countSql, countParams)]);
      const ids = rows.rows.map((r) => r[idColumn]);
      if (ids.length > 0) {
        const [linksSql, linksParams] = linksOf(ids);
        await pool.query(linksSql, linksParams);
      }
      return ids.length;
    }

    const viaPg = async () => {
      const latencies = [];
      const deadline = Date.now() + DURATION_S * 1000;
      let i = 0;
      await Promise.all(
        Array.from({ length: CONNECTIONS }, async () => {
          while (Date.now() < deadline) {
            const pair = list[i++ % list.length];
            const t0 = process.hrtime.bigint();
            await direct(pair);
            latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
          }
        }),
      );
      return { p50: percentile(latencies, 50), p99: percentile(latencies, 99), rps: latencies.length / DURATION_S };
    };
    const viaApi = async () => {
      let i = 0;
      const result = await load({
        url: api.url,
        connections: CONNECTIONS,
        duration: DURATION_S,
        headers: { authorization: `Bearer ${token}` },
        requests: [
          {
            method: 'GET',
            setupRequest: (request) => {
              const [a, b] = list[i++ % list.length];
              return { ...request, path: `/schemas?tagNames=${a},${b}` };
            },
          },
        ],
      });
      expectStatuses('GET /schemas', result, [200]);
      return result;
    };

    // Same answers both ways, for one pair, before timing anything.
    const probe = await (
      await fetch(`${api.url}/schemas?tagNames=${list[0].join(',')}`, { headers: { authorization: `Bearer ${token}` } })
    ).json();
    const probeIds = await direct(list[0]);
    log(`probe: api total ${probe.total}, page ${probe.schemas.length}; pg page ${probeIds}`);
    // The page statement reads one row more than the page (cursor paging: it tells whether a next page exists).
    if (probe.schemas.length !== Math.min(probeIds, 20))
      throw new Error('the api and the direct SQL disagree on the page');

    // The plans of the page and count statements for the probe pair.
    const [namesSql, namesParams] = tagsNamed(list[0]).getQueryAndParameters();
    const ids = (await pool.query(namesSql, namesParams)).rows.map((r) => r.tagId);
    const { page, count } = statements(ids);
    let planText = '';
    for (const [label, query] of [
      ['names', tagsNamed(list[0])],
      ['page', page],
      ['count', count],
    ]) {
      const [sql, params] = query.getQueryAndParameters();
      const plan = await pool.query(`explain (analyze, buffers) ${sql}`, params);
      planText += `-- ${label}\n${sql}\n${plan.rows.map((r) => r['QUERY PLAN']).join('\n')}\n\n`;
    }
    const planFile = writeResultFile(`filter-plan-${SMOKE ? 'smoke' : 'full'}.txt`, planText);
    process.stderr.write(planText);

    log('warm-up');
    await viaPg();
    await viaApi();
    const [product, base] = await alternate(ROUNDS, viaApi, viaPg);
    await pool.end();
    await source.destroy();
    await api.stop();
    const notes = [
      `${counts.schemas} schemas, ${counts.tags} tags, ${counts.links} links (each tag on ${Math.round(counts.links / counts.tags)} schemas); ` +
        `${PAIRS} random name pairs in turn, ${CONNECTIONS} concurrent requests each side, pool of 10; median of ${ROUNDS} run(s) of ${DURATION_S} s.`,
      `The pg side sends the service's four statements (names; page and count together; links of the page), built by the exported query builders. Plans: ${planFile}`,
    ];
    if (PROFILE) notes.push(`api CPU profile, top self time:\n${profileSummary(api).join('\n')}`);
    const opts = { higherIsBetter: false, digits: 1 };
    return {
      rows: [
        row('p99 latency', median(product.map((r) => r.p99)), median(base.map((r) => r.p99)), 'ms', 2, opts),
        row('p50 latency', median(product.map((r) => r.p50)), median(base.map((r) => r.p50)), 'ms', undefined, opts),
        row('throughput', median(product.map((r) => r.rps)), median(base.map((r) => r.rps)), 'req/s', undefined),
      ],
      notes,
    };
  },
  { timeoutMs: SMOKE ? 180_000 : 2_400_000 },
);
