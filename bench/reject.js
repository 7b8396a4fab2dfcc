// 5. Rejections: the config server's binding 403 (token sid != serviceId) vs an authenticated 403 that
// stops at the scope check (GET /tags with a token lacking portal.r); both verify the same kind of token,
// write one warning line of about the same size and touch no table: like for like (issue 40). Proves with PostgreSQL's own counters that the rejection run sent no SQL.
import { readFileSync } from 'node:fs';
import {
  alternate,
  benchDatabase,
  databaseActivity,
  expectStatuses,
  fact,
  load,
  log,
  makeIssuer,
  median,
  profileSummary,
  PROFILE,
  row,
  runBenchmark,
  sleep,
  SMOKE,
  startProduct,
  WARM_UP_SECONDS,
} from './lib.js';

const CONNECTIONS = 32;
const ROUNDS = SMOKE ? 1 : 3;
/** An idle PostgreSQL 15 backend flushes its statistics within 10 s (PGSTAT_IDLE_INTERVAL). */
const STATS_SETTLE_MS = 11_000;
/** The api's pruners (change feed, config history) run once 5 s after start; their statistics must land first. */
const PRUNERS_AFTER_START_MS = 5_000;

await runBenchmark('reject', 'binding 403 on /config-server/configs vs scope 403 on /tags', async () => {
  const db = await benchDatabase('reject');
  const issuer = await makeIssuer();
  const api = await startProduct('api', { databaseUrl: db.url, issuer });
  // The same runtime claims on both tokens; only the scope differs.
  const runtime = { sub: 'svc-a', host: 'bench-host', sid: 'svc-a', env: 'prod' };
  const bound = await issuer.sign({ ...runtime, scope: 'portal.r' });
  const scopeless = await issuer.sign({ ...runtime, scope: 'portal.none' });
  const binding = {
    url: `${api.url}/config-server/configs?host=bench-host&serviceId=svc-b&envTag=prod`,
    headers: { authorization: `Bearer ${bound}` },
  };
  const scope = { url: `${api.url}/tags/any-tag`, headers: { authorization: `Bearer ${scopeless}` } };
  const run = (target) => async () => {
    const cpuBefore = api.cpuMicros();
    const result = await load({ ...target, connections: CONNECTIONS });
    expectStatuses(target.url, result, [403]);
    // CPU per request moves far less than req/s on a busy machine (the load generator shares it).
    return { ...result, cpuUs: (api.cpuMicros() - cpuBefore) / result.total };
  };
  log('warm-up');
  await load({ ...binding, connections: 8, duration: WARM_UP_SECONDS });
  await load({ ...scope, connections: 8, duration: WARM_UP_SECONDS });

  // Like for like: each 403 writes one warning line; their sizes are reported beside the ratio.
  // The whole log: the warm-up's lines alone pass the first MiB that output() reads.
  const warningBytes = (message) =>
    Buffer.byteLength(
      readFileSync(api.logFile, 'utf8')
        .split('\n')
        .find((line) => line.includes(`"msg":"${message}`)) ?? '',
    );
  const [bindingLine, scopeLine] = [warningBytes('token binding rejected'), warningBytes('access refused')];
  log(`warning lines: binding 403 ${bindingLine} bytes, scope 403 ${scopeLine} bytes`);
  if (bindingLine === 0 || scopeLine === 0) throw new Error('a 403 wrote no warning line: not like for like');

  await sleep(PRUNERS_AFTER_START_MS + STATS_SETTLE_MS);
  const before = await databaseActivity(db.adminUrl, db.database);
  const [product, base] = await alternate(ROUNDS, run(binding), run(scope));
  await sleep(STATS_SETTLE_MS);
  const after = await databaseActivity(db.adminUrl, db.database);
  const rejected = product.reduce((n, r) => n + r.total, 0) + base.reduce((n, r) => n + r.total, 0);
  const each = (runs) => runs.map((r) => `${Math.round(r.rps)} req/s (${r.cpuUs.toFixed(1)} µs)`).join(', ');
  log(`binding 403: ${each(product)}; scope 403: ${each(base)}`);

  // Control: the counters do see a run that reaches the database (GET /tags/{unknown} -> 404).
  const reader = await issuer.sign({ ...runtime, scope: 'portal.r' });
  const control = await load({
    url: `${api.url}/tags/no-such-tag`,
    headers: { authorization: `Bearer ${reader}` },
    connections: 8,
    duration: 1,
  });
  expectStatuses('control 404', control, [404]);
  await sleep(STATS_SETTLE_MS);
  const afterControl = await databaseActivity(db.adminUrl, db.database);
  const metrics = await (await fetch(`${api.url}/metrics`)).text();
  const counted = [...metrics.matchAll(/^bindery_binding_rejections_total\{[^}]*reason="sid"[^}]*\} (\d+)/gm)].reduce(
    (n, m) => n + Number(m[1]),
    0,
  );
  await api.stop();
  const sqlDuring = after.xacts - before.xacts;
  const controlXacts = afterControl.xacts - after.xacts;
  log(
    `${rejected} rejections: ${sqlDuring} transactions; control ${control.total} x 404: ${controlXacts} transactions`,
  );
  const notes = [
    `Baseline: GET /tags/{id} with a valid token lacking portal.r, answered 403 insufficient_scope by the same guard ` +
      `after the same verification, before any SQL, with its own warning line (${scopeLine} bytes against the binding ` +
      `line's ${bindingLine}). (GET /health/live has no auth; a 404 on /tags would add a SELECT.) The binding 403 adds ` +
      `the binding guard and its metric, both required by DESIGN 6.2.`,
    `SQL proof: pg_stat_database xact_commit + xact_rollback of the bench database, read from another database's ` +
      `session, before and after all rejection runs (${rejected} requests, both kinds): +${sqlDuring}. Control run of ` +
      `${control.total} GET /tags/{unknown} (404, one SELECT each): +${controlXacts}. The api's /metrics counted ` +
      `${counted} sid rejections.`,
    `${CONNECTIONS} connections; median of ${ROUNDS} alternating run(s).`,
  ];
  if (PROFILE) notes.push(`api CPU profile, top self time:\n${profileSummary(api).join('\n')}`);
  return {
    rows: [
      row('throughput binding 403', median(product.map((r) => r.rps)), median(base.map((r) => r.rps)), 'req/s', 0.9),
      row(
        'server CPU per request: binding 403 / scope 403',
        median(product.map((r) => r.cpuUs)),
        median(base.map((r) => r.cpuUs)),
        'µs',
        undefined,
        { higherIsBetter: false, digits: 1 },
      ),
      row('p99 latency', median(product.map((r) => r.p99)), median(base.map((r) => r.p99)), 'ms', undefined, {
        higherIsBetter: false,
        digits: 1,
      }),
      fact('SQL transactions during the rejection runs', sqlDuring, 'xacts', '0', sqlDuring === 0),
    ],
    notes,
  };
});
