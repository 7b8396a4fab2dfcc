// 3. Peer: the tag table served by Bindery's api and by @platformatic/db (both with JWT auth), under
// the same create / read / list mix; Bindery's throughput over the peer's. Like for like: each side at its
// shipped log level (headline) and both at warn (extra rows); the peer verifying every token (its default)
// and with fast-jwt's cache for a minute (as Bindery remembers verified tokens). On Node >= 22.21 the
// peer's current major (3.x, npm alias `platformatic-db3`) is measured too.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { cpuMeter } from './peer-cpu.js';
import {
  alternate,
  AUDIENCE,
  BENCH,
  benchDatabase,
  expectStatuses,
  ISSUER,
  load,
  log,
  makeIssuer,
  median,
  profileSummary,
  PROFILE,
  RESULTS,
  row,
  runBenchmark,
  SMOKE,
  startBenchServer,
  startProduct,
} from './lib.js';

const CONNECTIONS = 32;
const ROUNDS = SMOKE ? 1 : 3;
// Tags in the table when each run starts; BENCH_PEER_PRESEED sets another size (the peer counts rows for
// the list's total, Bindery reads per-host counters, so the size moves the ratio).
const PRESEED = Number(process.env.BENCH_PEER_PRESEED ?? (SMOKE ? 500 : 5000));
// Bindery remembers a verified token for a minute; the peer's cached runs get the same time to live.
const JWT_CACHE_TTL_MS = 60_000;

const version = (dir) => JSON.parse(readFileSync(join(BENCH, 'node_modules', dir, 'package.json'), 'utf8')).version;
const [nodeMajor, nodeMinor] = process.versions.node.split('.').map(Number);
// 3.x declares Node >= 22.19, one of its dependencies (acquerello) >= 22.21.
const RUNS_3X = nodeMajor > 22 || (nodeMajor === 22 && nodeMinor >= 21);
const PEERS = [
  { major: 2, version: version('@platformatic/db') },
  ...(RUNS_3X ? [{ major: 3, version: version('platformatic-db3') }] : []),
];
// Headline: each side at its shipped default (Bindery `info`, a line per request; platformatic `info`, the
// level its generator writes: two lines per request). Then both at `warn`.
const PHASES = [
  { level: 'info', label: 'defaults (info logs)' },
  { level: 'warn', label: 'both at warn' },
];

/**
 * One connection's cycle: create a tag, read it back by id, list the first page (20 by tagId, with
 * the total). `side` says how each server spells it.
 */
function mix(side, names) {
  const json = { 'content-type': 'application/json' };
  return [
    {
      method: 'POST',
      path: side.collection,
      headers: json,
      setupRequest: (request) => ({ ...request, body: JSON.stringify(side.body(names())) }),
      onResponse: (status, body, context) => {
        if (status === 201 || status === 200) context.tagId = JSON.parse(body).tagId;
      },
    },
    {
      method: 'GET',
      setupRequest: (request, context) => ({ ...request, path: `${side.collection}/${context.tagId}` }),
    },
    { method: 'GET', path: side.list },
  ];
}

const bindery = {
  collection: '/tags',
  list: '/tags?limit=20&sort=tagId',
  body: (name) => ({ tagName: name, tagDesc: 'created by the bench', hostId: 'bench-host' }),
};
const platformatic = {
  collection: '/tag',
  list: '/tag?limit=20&orderby.tagId=asc&totalCount=true',
  // The peer has no id generator, audit fields or version of its own: the client sends them.
  body: (name) => ({
    tagId: randomBytes(16).toString('base64url'),
    hostId: 'bench-host',
    tagName: name,
    tagDesc: 'created by the bench',
    updateUser: 'bench-writer',
    updateTs: new Date().toISOString(),
    aggregateVersion: 1,
  }),
};

await runBenchmark('peer', `create/read/list of tags: Bindery vs @platformatic/db`, async () => {
  const db = await benchDatabase('peer');
  const issuer = await makeIssuer();
  const seed = new pg.Client({ connectionString: db.url });
  // A lost session fails the next query (and so the run) instead of crashing the bench without cleanup.
  seed.on('error', (error) => log(`seed session: ${error.message}`));
  await seed.connect();
  await seed.query(
    `insert into tag (tag_id, host_id, tag_name, update_user)
     select 'pre' || g, 'bench-host', 'pre-' || g, 'bench' from generate_series(1, $1) g`,
    [PRESEED],
  );
  await seed.query('analyze tag');
  // Every run starts from the pre-seeded table: the peer counts rows for its total (Bindery reads
  // tag_count), so tags left by earlier runs would slow whichever side runs later.
  const reset = async () => {
    await seed.query(`delete from tag where update_user <> 'bench'`);
    await seed.query('vacuum analyze tag');
  };

  const publicKeyFile = join(RESULTS, 'data', 'peer-public.pem');
  writeFileSync(publicKeyFile, issuer.publicPem);
  // One token for both: Bindery reads the scope and host, the peer the role.
  const token = await issuer.sign({
    sub: 'bench-writer',
    scope: 'portal.r portal.w',
    host: 'bench-host',
    roles: 'tag-writer',
  });
  const headers = { authorization: `Bearer ${token}` };
  let serial = 0;
  const run = (server, side, label) => async (round) => {
    await reset();
    const names = () => `${label}-${round}-${serial++}`;
    const meter = await cpuMeter(server.pid, seed, db.database);
    const result = await load({ url: server.url, connections: CONNECTIONS, headers, requests: mix(side, names) });
    const { serverMs, dbMs } = await meter.stop();
    expectStatuses(label, result, [200, 201]);
    // Requests per CPU second: what each side would serve with the machine to itself.
    return {
      ...result,
      perServerCpu: (result.total * 1000) / serverMs,
      perCpu: (result.total * 1000) / (serverMs + dbMs),
    };
  };

  const rows = [];
  const notes = [];
  const rps = (runs) => median(runs.map((r) => r.rps));
  const p99 = (runs) => median(runs.map((r) => r.p99));
  const perServerCpu = (runs) => median(runs.map((r) => r.perServerCpu));
  const perCpu = (runs) => median(runs.map((r) => r.perCpu));
  for (const phase of PHASES) {
    const api = await startProduct('api', {
      databaseUrl: db.url,
      issuer,
      name: `api-${phase.level}`,
      logLevel: phase.level,
    });
    const peers = [];
    for (const peer of PEERS) {
      for (const cached of [false, true]) {
        const name = `peer${peer.major}-${phase.level}-${cached ? 'cache' : 'nocache'}`;
        const server = await startBenchServer(name, 'peer-platformatic.js', {
          DATABASE_URL: db.url,
          POOL_SIZE: '10',
          PUBLIC_KEY_FILE: publicKeyFile,
          JWT_ISSUER: ISSUER,
          JWT_AUDIENCE: AUDIENCE,
          PEER_MAJOR: String(peer.major),
          PEER_LOG_LEVEL: phase.level,
          PEER_JWT_CACHE_TTL_MS: String(cached ? JWT_CACHE_TTL_MS : 0),
        });
        peers.push({ ...peer, cached, name, server });
      }
    }
    log(`${phase.label}: warm-up`);
    await run(api, bindery, `warm-bindery-${phase.level}`)(0);
    for (const peer of peers) await run(peer.server, platformatic, `warm-${peer.name}`)(0);
    const [product, ...bases] = await alternate(
      ROUNDS,
      run(api, bindery, `bindery-${phase.level}`),
      ...peers.map((peer) => run(peer.server, platformatic, peer.name)),
    );
    const each = (runs, key) => runs.map((r) => Math.round(r[key])).join(', ');
    const figures = (runs) =>
      `${each(runs, 'rps')} req/s; ${each(runs, 'perServerCpu')} req/CPU s (server); ` +
      `${each(runs, 'perCpu')} req/CPU s (server + PostgreSQL)`;
    log(`${phase.label}: Bindery ${figures(product)}`);
    peers.forEach((peer, i) => log(`${phase.label}: ${peer.name} ${figures(bases[i])}`));
    await api.stop();
    for (const peer of peers) await peer.server.stop();
    peers.forEach((peer, i) => {
      const what = `${phase.label}, peer ${peer.version} ${peer.cached ? 'with a 1 min JWT cache' : 'verifying every JWT'}`;
      // The goal is like for like: the peer caching tokens as Bindery does.
      rows.push(row(`throughput, ${what}`, rps(product), rps(bases[i]), 'req/s', peer.cached ? 1.5 : undefined));
      rows.push(
        row(
          `requests per CPU second of the server, ${what}`,
          perServerCpu(product),
          perServerCpu(bases[i]),
          'req/CPU s',
        ),
      );
      rows.push(
        row(`requests per CPU second of server + PostgreSQL, ${what}`, perCpu(product), perCpu(bases[i]), 'req/CPU s'),
      );
      if (phase.level === 'info') {
        rows.push(
          row(`p99 latency, ${what}`, p99(product), p99(bases[i]), 'ms', undefined, {
            higherIsBetter: false,
            digits: 1,
          }),
        );
      }
    });
    if (PROFILE) {
      notes.push(`api (${phase.label}) CPU profile, top self time:\n${profileSummary(api).join('\n')}`);
      const peer = peers.find((p) => p.cached);
      notes.push(`${peer.name} CPU profile, top self time:\n${profileSummary(peer.server).join('\n')}`);
    }
  }
  await seed.end();
  notes.unshift(
    `Peer: @platformatic/db ${PEERS.map((p) => p.version).join(' and ')} on Node ${process.versions.node}` +
      (RUNS_3X ? '' : ' (3.x needs Node 22.21: run the bench under Node 24 to measure it)') +
      '; 2.x through buildServer, 3.x through its capability (what `wattpm start` runs in a worker) on the main thread; ' +
      'only the tag table mapped. Auth: @fastify/jwt with the same ES256 public key, issuer and audience; a role rule on the tag entity. ' +
      `"with a JWT cache": fast-jwt's verification cache (cache: true, cacheTTL ${JWT_CACHE_TTL_MS} ms), as Bindery remembers verified tokens for a minute. ` +
      'Log levels: the headline rows run each side at its default (Bindery info: a line per request; platformatic info: two), the warn rows both at warn.',
    `${CONNECTIONS} connections each; each cycles create (POST), read that tag (GET by id), list (first 20 by tagId with the total); ` +
      `${PRESEED} tags pre-seeded, the created ones deleted before each run; median of ${ROUNDS} alternating run(s) per phase, ` +
      'Bindery and every peer variant in the same phase. ' +
      '"requests per CPU second": requests over the CPU time (/proc) the server process, and with it the PostgreSQL backends ' +
      'of the bench database, used during the run; less moved by other load on the machine than req/s.',
  );
  return { rows, notes };
});
