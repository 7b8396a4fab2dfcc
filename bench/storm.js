// 4. Registration storm: WebSocket clients, each with its own token, connect to the controller and call
// service/register; rate and p99 vs a bare `ws` server that only verifies the token and upserts the row.
// Then the controller's resident memory per idle registered connection.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  alternate,
  AUDIENCE,
  BENCH,
  benchDatabase,
  fact,
  ISSUER,
  log,
  makeIssuer,
  median,
  profileSummary,
  PROFILE,
  round,
  row,
  runBenchmark,
  sleep,
  SMOKE,
  startBenchServer,
  startChild,
  startProduct,
} from './lib.js';

const CLIENTS = SMOKE ? 500 : 5000;
const IDLE = SMOKE ? 1000 : 10_000;
/** Handshakes in flight at once (Node's listen backlog is 511). */
const WINDOW = 256;
const SOURCES = 4;
const ROUNDS = SMOKE ? 1 : 2;

function openFilesLimit(pid) {
  const limits = readFileSync(`/proc/${pid}/limits`, 'utf8');
  return Number(/Max open files\s+(\d+)/.exec(limits)?.[1] ?? 0);
}

/** Runs the client process; resolves with its result (and, with `hold`, a function that closes its sockets). */
async function clients(name, job) {
  const child = startChild(name, join(BENCH, 'ws-clients.js'), {});
  child.child.stdin.write(`${JSON.stringify(job)}\n`);
  const [, json] = await child.waitFor(/RESULT (.*)\n/, 300_000);
  const result = JSON.parse(json);
  if (result.failed > 0) log(`${name}: ${result.failed} failed: ${result.failures.join('; ')}`);
  const close = async () => {
    child.child.stdin.write('close\n');
    await child.stop(30_000);
  };
  if (!job.hold) await child.stop(30_000);
  return { ...result, close };
}

await runBenchmark(
  'storm',
  'WebSocket registration storm vs a bare ws + jose + pg server',
  async () => {
    const db = await benchDatabase('storm');
    const issuer = await makeIssuer();
    const controller = await startProduct('controller', { databaseUrl: db.url, issuer });
    const bare = await startBenchServer('storm-baseline', 'baseline-ws.js', {
      DATABASE_URL: db.url,
      POOL_SIZE: '10',
      JWT_JWKS_FILE: issuer.jwksFile,
      JWT_ISSUER: ISSUER,
      JWT_AUDIENCE: AUDIENCE,
      CONTROLLER_HOST_ID: 'bench-bare',
    });
    const job = (url, hostId, prefix, count, hold = false) => ({
      url: `${url.replace('http', 'ws')}/ws/microservice`,
      hostId,
      prefix,
      count,
      hold,
      window: WINDOW,
      sources: SOURCES,
      issuer: ISSUER,
      audience: AUDIENCE,
      privateJwk: issuer.privateJwk,
    });
    const storm = (server, hostId, label) => async (r) => {
      const result = await clients(`storm-clients-${label}-${r}`, job(server.url, hostId, `${label}-${r}`, CLIENTS));
      if (result.ok !== CLIENTS) throw new Error(`${label}: ${result.ok} of ${CLIENTS} registered`);
      log(`${label}: ${round(result.rate)} registrations/s, p99 ${round(result.p99, 1)} ms`);
      return result;
    };
    log('warm-up');
    await clients('storm-warm-c', job(controller.url, 'bench-host', 'warm', 200));
    await clients('storm-warm-b', job(bare.url, 'bench-bare', 'warm', 200));
    const [product, base] = await alternate(
      ROUNDS,
      storm(controller, 'bench-host', 'controller'),
      storm(bare, 'bench-bare', 'bare'),
    );

    await controller.stop();
    await bare.stop();

    // Idle sockets, on fresh processes (a storm's garbage would blur the growth): resident memory growth
    // of each server per registered, idle connection, after a short warm-up of each.
    const limit = openFilesLimit(process.pid);
    const idle = Math.min(IDLE, limit - 200);
    const perConnection = async (server, hostId, label) => {
      await clients(`storm-idle-warm-${label}`, job(server.url, hostId, `idle-warm-${label}`, 200));
      await sleep(2000);
      const before = server.rssKiB();
      const held = await clients(`storm-idle-${label}`, job(server.url, hostId, `idle-${label}`, idle, true));
      await sleep(3000);
      const after = server.rssKiB();
      await held.close();
      log(`${label}: ${held.ok} idle sockets, RSS ${before} -> ${after} KiB`);
      if (held.ok !== idle) throw new Error(`${label}: only ${held.ok} of ${idle} idle sockets registered`);
      await server.stop();
      return (after - before) / idle;
    };
    const idleController = await startProduct('controller', { databaseUrl: db.url, issuer, name: 'controller-idle' });
    const controllerKiB = await perConnection(idleController, 'bench-host', 'controller');
    const idleBare = await startBenchServer('storm-baseline-idle', 'baseline-ws.js', {
      DATABASE_URL: db.url,
      POOL_SIZE: '10',
      JWT_JWKS_FILE: issuer.jwksFile,
      JWT_ISSUER: ISSUER,
      JWT_AUDIENCE: AUDIENCE,
      CONTROLLER_HOST_ID: 'bench-bare',
    });
    const bareKiB = await perConnection(idleBare, 'bench-bare', 'bare');

    const notes = [
      `${CLIENTS} clients per run, each its own ES256 token (own sid), at most ${WINDOW} handshakes in flight, from ${SOURCES} ` +
        `loopback source addresses; a client's latency is from opening the socket to the register reply; median of ${ROUNDS} ` +
        `alternating run(s). Both servers: pool of 10, the same upsert; the bare one verifies the token once (upgrade), ` +
        `the controller at the upgrade and again on the call (DESIGN 8).`,
      `Idle: ${idle} registered sockets held open on a fresh process of each kind (open-files limit ${limit}); RSS growth ` +
        `(VmRSS) divided by the socket count, garbage included, so it moves with GC timing (the bare server's ${round(bareKiB, 1)} KiB for comparison).`,
    ];
    if (idle < IDLE) notes.push(`Only ${idle} idle sockets: the open-files limit is ${limit}.`);
    if (PROFILE) notes.push(`controller CPU profile, top self time:\n${profileSummary(controller).join('\n')}`);
    return {
      rows: [
        row(
          `registrations/s (${CLIENTS} clients)`,
          median(product.map((r) => r.rate)),
          median(base.map((r) => r.rate)),
          'reg/s',
          0.5,
        ),
        row('p99 connect+register', median(product.map((r) => r.p99)), median(base.map((r) => r.p99)), 'ms', 2, {
          higherIsBetter: false,
          digits: 1,
        }),
        row(`RSS per idle connection (${idle})`, controllerKiB, bareKiB, 'KiB', undefined, {
          higherIsBetter: false,
          digits: 1,
        }),
        fact(`RSS per idle connection, goal`, round(controllerKiB, 1), 'KiB', '≤ 100 KiB', controllerKiB <= 100),
      ],
      notes,
    };
  },
  { timeoutMs: SMOKE ? 240_000 : 1_200_000 },
);
