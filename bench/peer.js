// 3. Peer: the tag table served by Bindery's api and by @platformatic/db (both with JWT auth), under
// the same create / read / list mix; Bindery's throughput over the peer's.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import {
  alternate,
  AUDIENCE,
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
const PRESEED = SMOKE ? 500 : 5000;

const require = (await import('node:module')).createRequire(import.meta.url);
const PEER_VERSION = require('@platformatic/db/package.json').version;

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

await runBenchmark('peer', `create/read/list of tags: Bindery vs @platformatic/db`, async () => {
  const db = await benchDatabase('peer');
  const issuer = await makeIssuer();
  const seed = new pg.Client({ connectionString: db.url });
  await seed.connect();
  await seed.query(
    `insert into tag (tag_id, host_id, tag_name, update_user)
     select 'pre' || g, 'bench-host', 'pre-' || g, 'bench' from generate_series(1, $1) g`,
    [PRESEED],
  );
  await seed.query('analyze tag');
  await seed.end();

  const publicKeyFile = join(RESULTS, 'data', 'peer-public.pem');
  writeFileSync(publicKeyFile, issuer.publicPem);
  const api = await startProduct('api', { databaseUrl: db.url, issuer });
  const peer = await startBenchServer('peer-platformatic', 'peer-platformatic.js', {
    DATABASE_URL: db.url,
    POOL_SIZE: '10',
    PUBLIC_KEY_FILE: publicKeyFile,
    JWT_ISSUER: ISSUER,
    JWT_AUDIENCE: AUDIENCE,
  });
  // One token for both: Bindery reads the scope and host, the peer the role.
  const token = await issuer.sign({
    sub: 'bench-writer',
    scope: 'portal.r portal.w',
    host: 'bench-host',
    roles: 'tag-writer',
  });
  const headers = { authorization: `Bearer ${token}` };
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
  let serial = 0;
  const run = (url, side, label) => async (round) => {
    const names = () => `${label}-${round}-${serial++}`;
    const result = await load({ url, connections: CONNECTIONS, headers, requests: mix(side, names) });
    expectStatuses(label, result, [200, 201]);
    return result;
  };
  log('warm-up');
  await run(api.url, bindery, 'warm-bindery')(0);
  await run(peer.url, platformatic, 'warm-peer')(0);
  const [product, base] = await alternate(
    ROUNDS,
    run(api.url, bindery, 'bindery'),
    run(peer.url, platformatic, 'platformatic'),
  );
  log(
    `Bindery ${product.map((r) => Math.round(r.rps)).join(', ')} req/s; peer ${base.map((r) => Math.round(r.rps)).join(', ')} req/s`,
  );
  await api.stop();
  await peer.stop();
  const notes = [
    `Peer: @platformatic/db ${PEER_VERSION}, ` +
      (Number(process.versions.node.split('.')[0]) < 22
        ? `the newest version that runs on Node ${process.versions.node} (3.x needs Node 22.19: its @platformatic/foundation imports glob from node:fs/promises). `
        : `pinned for this machine's Node 20; on Node ${process.versions.node} 3.x would also run and is not measured here. `) +
      `Auth: @fastify/jwt with the same ES256 public key, issuer and audience; a role rule on the tag entity.`,
    `${CONNECTIONS} connections each; each cycles create (POST), read that tag (GET by id), list (first 20 by tagId with the total); ` +
      `${PRESEED} tags pre-seeded, created tags accumulate; median of ${ROUNDS} alternating run(s).`,
  ];
  if (PROFILE) notes.push(`api CPU profile, top self time:\n${profileSummary(api).join('\n')}`);
  return {
    rows: [
      row(
        'throughput, create/read/list mix',
        median(product.map((r) => r.rps)),
        median(base.map((r) => r.rps)),
        'req/s',
        1.5,
      ),
      row('p99 latency', median(product.map((r) => r.p99)), median(base.map((r) => r.p99)), 'ms', undefined, {
        higherIsBetter: false,
        digits: 1,
      }),
    ],
    notes,
  };
});
