// 1. Auth overhead: authenticated GET /tags/{id} on the api vs the smallest Nest app doing the same (bearer
// guard, one parameter, the same SELECT; bench/baseline-nest.js) vs raw Fastify + pg without auth; same
// database, same HTTP connection count, same pool size. Bindery / Nest is the cost of Bindery's own layers.
import pg from 'pg';
import {
  alternate,
  AUDIENCE,
  ISSUER,
  PRODUCT_LOG_LEVEL,
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
  WARM_UP_SECONDS,
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
  // The same build without its line per request (LOG_LEVEL=warn): what the request line costs, in the same run.
  const quiet = await startProduct('api', { databaseUrl: db.url, issuer, name: 'api-warn', logLevel: 'warn' });
  const raw = await startBenchServer('auth-baseline', 'baseline-http.js', { DATABASE_URL: db.url, POOL_SIZE: '10' });
  const nest = await startBenchServer('auth-nest', 'baseline-nest.js', {
    DATABASE_URL: db.url,
    POOL_SIZE: '10',
    JWT_JWKS_FILE: issuer.jwksFile,
    JWT_ISSUER: ISSUER,
    JWT_AUDIENCE: AUDIENCE,
  });
  // Like for like in the database: the same Nest app naming its statement, as Bindery does on a direct connection.
  const nestNamed = await startBenchServer('auth-nest-named', 'baseline-nest.js', {
    DATABASE_URL: db.url,
    POOL_SIZE: '10',
    JWT_JWKS_FILE: issuer.jwksFile,
    JWT_ISSUER: ISSUER,
    JWT_AUDIENCE: AUDIENCE,
    BASELINE_NAMED: '1',
  });
  // A runtime reader: scope portal.r and a host, the common caller of reads.
  const token = await issuer.sign({ sub: 'bench-reader', scope: 'portal.r', host: 'bench-host' });

  // Each run also reads the server's CPU time: CPU per request barely moves when other work shares the machine.
  const run = (server, headers) => async () => {
    const url = server.url;
    let i = 0;
    const cpuBefore = server.cpuMicros();
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
    return { ...result, cpuUs: (server.cpuMicros() - cpuBefore) / result.total };
  };
  const bearer = { authorization: `Bearer ${token}` };
  const bindery = run(api, bearer);
  const binderyQuiet = run(quiet, bearer);
  const smallestNest = run(nest, bearer);
  const namedNest = run(nestNamed, bearer);
  const baseline = run(raw, {});
  log('warm-up');
  await load({
    url: `${api.url}/tags/auth1`,
    connections: 8,
    duration: WARM_UP_SECONDS,
    headers: { authorization: `Bearer ${token}` },
  });
  await load({ url: `${quiet.url}/tags/auth1`, connections: 8, duration: WARM_UP_SECONDS, headers: bearer });
  await load({ url: `${nest.url}/tags/auth1`, connections: 8, duration: WARM_UP_SECONDS, headers: bearer });
  await load({ url: `${nestNamed.url}/tags/auth1`, connections: 8, duration: WARM_UP_SECONDS, headers: bearer });
  await load({ url: `${raw.url}/tags/auth1`, connections: 8, duration: WARM_UP_SECONDS });
  const [product, nested, base, nestedNamed, productQuiet] = await alternate(
    ROUNDS,
    bindery,
    smallestNest,
    baseline,
    namedNest,
    binderyQuiet,
  );
  const rps = median(product.map((r) => r.rps));
  const nestRps = median(nested.map((r) => r.rps));
  const baseRps = median(base.map((r) => r.rps));
  const each = (runs) => runs.map((r) => Math.round(r.rps)).join(', ');
  log(
    `Bindery ${each(product)} req/s; smallest Nest ${each(nested)} req/s; raw ${each(base)} req/s; ` +
      `Nest naming its statement ${each(nestedNamed)} req/s; Bindery at warn ${each(productQuiet)} req/s`,
  );
  const cpu = (runs) => median(runs.map((r) => r.cpuUs));
  const cpus = (runs) => runs.map((r) => r.cpuUs.toFixed(0)).join(', ');
  log(
    `CPU per request: Bindery ${cpus(product)} µs; smallest Nest ${cpus(nested)} µs; raw ${cpus(base)} µs; ` +
      `Nest naming its statement ${cpus(nestedNamed)} µs; Bindery at warn ${cpus(productQuiet)} µs`,
  );
  const notes = [
    `${CONNECTIONS} HTTP connections each, pool of 10 PostgreSQL connections each, ${TAGS} tags read in turn; ` +
      `median of ${ROUNDS} alternating run(s); ES256 token (scope portal.r, host claim) on every request; ` +
      `Bindery at LOG_LEVEL=${PRODUCT_LOG_LEVEL}, the baselines without logging. Bindery names its statement on a direct connection; the ` +
      `headline gives the Nest app the same, and the "unnamed" row shows it with pg's default (unnamed).`,
  ];
  await api.stop();
  await quiet.stop();
  await nest.stop();
  await nestNamed.stop();
  await raw.stop();
  if (PROFILE) notes.push(`api CPU profile, top self time:\n${profileSummary(api).join('\n')}`);
  return {
    rows: [
      // The headline is like for like: the Nest app names its statement as Bindery does (issue 40).
      row(
        'throughput: Bindery / smallest Nest app naming its statement',
        rps,
        median(nestedNamed.map((r) => r.rps)),
        'req/s',
        0.8,
      ),
      row(
        'throughput: Bindery at LOG_LEVEL=warn (no request line) / the Nest app naming its statement',
        median(productQuiet.map((r) => r.rps)),
        median(nestedNamed.map((r) => r.rps)),
        'req/s',
      ),
      row(
        'server CPU per request: Bindery at info / at warn (the request line)',
        cpu(product),
        cpu(productQuiet),
        'µs',
        undefined,
        {
          higherIsBetter: false,
        },
      ),
      row('throughput: Bindery / smallest Nest app sending its statement unnamed', rps, nestRps, 'req/s'),
      row('throughput: Bindery / raw Fastify + pg', rps, baseRps, 'req/s', 0.8),
      row('throughput: smallest Nest app / raw', nestRps, baseRps, 'req/s'),
      row('server CPU per request: Bindery / smallest Nest', cpu(product), cpu(nested), 'µs', undefined, {
        higherIsBetter: false,
      }),
      row('server CPU per request: smallest Nest / raw', cpu(nested), cpu(base), 'µs', undefined, {
        higherIsBetter: false,
      }),
      row(
        'server CPU per request: Bindery / Nest naming its statement',
        cpu(product),
        cpu(nestedNamed),
        'µs',
        undefined,
        {
          higherIsBetter: false,
        },
      ),
      row('p99 latency', median(product.map((r) => r.p99)), median(base.map((r) => r.p99)), 'ms', undefined, {
        higherIsBetter: false,
        digits: 1,
      }),
    ],
    notes,
  };
});
