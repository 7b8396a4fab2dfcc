// 1. Auth overhead: authenticated GET /tags/{id} on the api vs raw Fastify + pg doing the same SELECT
// without auth; same database, same HTTP connection count, same pool size.
import pg from 'pg';
import {
  alternate,
  benchDatabase,
  expectStatuses,
  load,
  log,
  makeIssuer,
  median,
  profileSummary,
  PROFILE,
  row,
  runBenchmark,
  SMOKE,
  startBenchServer,
  startProduct,
} from './lib.js';

const TAGS = SMOKE ? 200 : 2000;
const CONNECTIONS = 32;
const ROUNDS = SMOKE ? 1 : 3;

await runBenchmark('auth', 'authenticated GET /tags/{id} vs raw Fastify + pg', async () => {
  const db = await benchDatabase('auth');
  const issuer = await makeIssuer();
  const seed = new pg.Client({ connectionString: db.url });
  await seed.connect();
  await seed.query(
    `insert into tag (tag_id, tag_name, tag_desc, update_user)
     select 'auth' || g, 'auth-tag-' || g, 'bench tag ' || g, 'bench' from generate_series(1, $1) g`,
    [TAGS],
  );
  await seed.query('analyze tag');
  await seed.end();

  const api = await startProduct('api', { databaseUrl: db.url, issuer });
  const raw = await startBenchServer('auth-baseline', 'baseline-http.js', { DATABASE_URL: db.url, POOL_SIZE: '10' });
  // A runtime reader: scope portal.r and a host, the common caller of reads.
  const token = await issuer.sign({ sub: 'bench-reader', scope: 'portal.r', host: 'bench-host' });

  const run = (url, headers) => async () => {
    let i = 0;
    const result = await load({
      url,
      connections: CONNECTIONS,
      headers,
      requests: [
        {
          method: 'GET',
          setupRequest: (request) => ({ ...request, path: `/tags/auth${(i++ % TAGS) + 1}` }),
        },
      ],
    });
    expectStatuses(url, result, [200]);
    return result;
  };
  const bindery = run(api.url, { authorization: `Bearer ${token}` });
  const baseline = run(raw.url, {});
  log('warm-up');
  await load({
    url: `${api.url}/tags/auth1`,
    connections: 8,
    duration: 1,
    headers: { authorization: `Bearer ${token}` },
  });
  await load({ url: `${raw.url}/tags/auth1`, connections: 8, duration: 1 });
  const [product, base] = await alternate(ROUNDS, bindery, baseline);
  const rps = median(product.map((r) => r.rps));
  const baseRps = median(base.map((r) => r.rps));
  log(
    `Bindery ${product.map((r) => Math.round(r.rps)).join(', ')} req/s; raw ${base.map((r) => Math.round(r.rps)).join(', ')} req/s`,
  );
  const notes = [
    `${CONNECTIONS} HTTP connections each, pool of 10 PostgreSQL connections each, ${TAGS} tags read in turn; ` +
      `median of ${ROUNDS} alternating run(s); ES256 token (scope portal.r, host claim) on every request.`,
  ];
  await api.stop();
  await raw.stop();
  if (PROFILE) notes.push(`api CPU profile, top self time:\n${profileSummary(api).join('\n')}`);
  return {
    rows: [
      row('throughput GET /tags/{id}', rps, baseRps, 'req/s', 0.8),
      row('p99 latency', median(product.map((r) => r.p99)), median(base.map((r) => r.p99)), 'ms', undefined, {
        higherIsBetter: false,
        digits: 1,
      }),
    ],
    notes,
  };
});
