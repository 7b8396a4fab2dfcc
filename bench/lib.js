// Shared helpers of the benchmarks: mode, bench database, keys and tokens, child processes, load runs,
// ratios and results. Every benchmark runs in its own process (started by bench/main.js, or alone).
import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { chmod, mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { SignJWT } from 'jose';
import pg from 'pg';

export const ROOT = resolve(import.meta.dirname, '..');
export const DIST = join(ROOT, 'dist');
export const BENCH = import.meta.dirname;
export const RESULTS = join(BENCH, 'results');
export const SMOKE = process.argv.includes('--smoke') || /^(1|true)$/i.test(process.env.BENCH_SMOKE ?? '');
export const PROFILE = process.argv.includes('--profile') || /^(1|true)$/i.test(process.env.BENCH_PROFILE ?? '');
export const MODE = SMOKE ? 'smoke' : 'full';
/**
 * Seconds of load before a side's first measured run: after 1 s the api still sped up run by run (CPU per
 * request 339 → 274 µs over five 5 s runs, the Nest baseline flat), which favoured whichever side warms faster.
 */
export const WARM_UP_SECONDS = SMOKE ? 1 : 5;
export const PRODUCT_LOG_LEVEL = process.env.BENCH_LOG_LEVEL ?? 'info';
export const ISSUER = 'https://issuer.bench';
/** The kernel's clock ticks per second (`getconf CLK_TCK`), the unit of /proc's CPU times. */
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
export const AUDIENCE = 'bindery';

mkdirSync(join(RESULTS, 'logs'), { recursive: true });
mkdirSync(join(RESULTS, 'data'), { recursive: true });

export function log(...parts) {
  process.stderr.write(`[bench] ${parts.join(' ')}\n`);
}

// ---------------------------------------------------------------------------------------------------
// Cleanup: children, databases and servers are released on success, failure, timeout and Ctrl-C.

const cleanups = [];

export function onCleanup(fn) {
  cleanups.push(fn);
}

async function cleanupAll() {
  while (cleanups.length > 0) {
    const fn = cleanups.pop();
    try {
      await fn();
    } catch (error) {
      log(`cleanup failed: ${error.message}`);
    }
  }
}

/**
 * Runs one benchmark: `body` returns `{ rows, notes }`; the result is printed on stdout as one
 * `BENCH_RESULT {...}` line for bench/main.js, and as a small table on stderr.
 */
export async function runBenchmark(name, title, body, { timeoutMs } = {}) {
  const limit = timeoutMs ?? (SMOKE ? 180_000 : 1_800_000);
  let finished = false;
  const abort = async (reason, code) => {
    if (finished) return;
    finished = true;
    log(`${name}: ${reason}; cleaning up`);
    await cleanupAll();
    process.exit(code);
  };
  const timer = setTimeout(() => void abort(`time limit of ${limit / 1000} s reached`, 3), limit);
  process.once('SIGINT', () => void abort('interrupted', 130));
  process.once('SIGTERM', () => void abort('terminated', 143));
  const started = Date.now();
  let result;
  try {
    log(`${name}: ${title} (${MODE} mode)`);
    result = { name, title, mode: MODE, ...(await body()) };
  } catch (error) {
    result = { name, title, mode: MODE, error: error.stack ?? String(error), rows: [], notes: [] };
  } finally {
    await cleanupAll();
    clearTimeout(timer);
  }
  finished = true;
  result.seconds = Math.round((Date.now() - started) / 1000);
  process.stderr.write(formatTable([result]));
  process.stdout.write(`BENCH_RESULT ${JSON.stringify(result)}\n`);
  process.exit(result.error === undefined ? 0 : 1);
}

// ---------------------------------------------------------------------------------------------------
// Numbers

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * One row of the table. `higherIsBetter`: the ratio is product/baseline and the goal a minimum;
 * otherwise the ratio is product/baseline and the goal a maximum (latencies).
 */
export function row(measure, product, baseline, unit, goal, { higherIsBetter = true, digits = 0 } = {}) {
  const ratio = product / baseline;
  const met = goal === undefined ? undefined : higherIsBetter ? ratio >= goal : ratio <= goal;
  return {
    measure,
    product: round(product, digits),
    baseline: round(baseline, digits),
    unit,
    ratio: round(ratio, 2),
    goal: goal === undefined ? '' : `${higherIsBetter ? '≥' : '≤'} ${goal}×`,
    met,
  };
}

/** A row without a baseline (an absolute measure with its own goal, or a count). */
export function fact(measure, value, unit, goal, met) {
  return { measure, product: value, baseline: '', unit, ratio: '', goal: goal ?? '', met };
}

export function round(value, digits = 0) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export function formatTable(results) {
  const lines = [
    '| benchmark | measure | Bindery | baseline | unit | ratio | goal | met |',
    '| --- | --- | ---: | ---: | --- | ---: | --- | --- |',
  ];
  for (const result of results) {
    if (result.error !== undefined) {
      lines.push(`| ${result.name} | failed: ${String(result.error).split('\n')[0]} | | | | | | no |`);
      continue;
    }
    for (const r of result.rows) {
      const met = r.met === undefined ? '' : r.met ? 'yes' : 'no';
      lines.push(
        `| ${result.name} | ${r.measure} | ${r.product} | ${r.baseline} | ${r.unit} | ${r.ratio === '' ? '' : `${r.ratio}×`} | ${r.goal} | ${met} |`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------------
// Ports, keys and tokens

export function freePort() {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => done(port));
    });
  });
}

/** An ES256 issuer for this run: the public key as a JWKS file (JWT_JWKS_FILE) and a signer. */
export async function makeIssuer() {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = `bench-${randomBytes(4).toString('hex')}`;
  const dir = await mkdtemp(join(tmpdir(), 'bindery-bench-keys-'));
  const jwksFile = join(dir, 'jwks.json');
  const publicJwk = { ...publicKey.export({ format: 'jwk' }), kid, alg: 'ES256', use: 'sig' };
  writeFileSync(jwksFile, JSON.stringify({ keys: [publicJwk] }));
  return {
    kid,
    jwksFile,
    privateJwk: { ...privateKey.export({ format: 'jwk' }), kid },
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }),
    sign: (claims, expiresInSec = 4 * 3600) => signToken(privateKey, kid, claims, expiresInSec),
  };
}

export function signToken(privateKey, kid, claims, expiresInSec = 4 * 3600) {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(now + expiresInSec)
    .sign(privateKey);
}

// ---------------------------------------------------------------------------------------------------
// The bench database: on the machine's PostgreSQL when reachable, else an embedded one.

async function reachable(url) {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

let server;

/** The PostgreSQL server of this run: `BENCH_PG_URL`, the machine's at 127.0.0.1:5432, or embedded. */
async function pgServer() {
  if (server !== undefined) return server;
  const given = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  if (await reachable(given)) {
    server = { adminUrl: given, kind: 'PostgreSQL at ' + new URL(given).host };
    return server;
  }
  log(`no PostgreSQL at ${new URL(given).host}: starting an embedded one`);
  const { startEmbeddedPostgres } = await import(join(DIST, 'libs/database/index.js'));
  const dir = await mkdtemp(join(tmpdir(), 'bindery-bench-pg-'));
  // PostgreSQL runs as the `postgres` user when we are root; it must be able to enter the directory.
  await chmod(dir, 0o755);
  const embedded = await startEmbeddedPostgres({
    dir: join(dir, 'data'),
    port: await freePort(),
    database: 'postgres',
  });
  onCleanup(() => embedded.stop());
  server = { adminUrl: embedded.url, kind: 'embedded PostgreSQL' };
  return server;
}

/** Creates `bindery_bench_<name>_<pid>` with the product's migrations; dropped at cleanup. */
export async function benchDatabase(name) {
  const { adminUrl, kind } = await pgServer();
  const database = `bindery_bench_${name}_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${database} with (force)`);
  await admin.query(`create database ${database}`);
  await admin.end();
  onCleanup(async () => {
    const drop = new pg.Client({ connectionString: adminUrl });
    await drop.connect();
    await drop.query(`drop database if exists ${database} with (force)`);
    await drop.end();
  });
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  const { migrate } = await import(join(DIST, 'libs/database/index.js'));
  await migrate(url.toString());
  log(`database ${database} on ${kind}`);
  return { url: url.toString(), adminUrl, database, kind };
}

/**
 * VACUUM ANALYZE of the whole database, between a write benchmark's warm-up and its measured rounds: what
 * autovacuum does within a minute of steady writes. Without it a round can run on statistics taken while a
 * table was empty, and every session's cached plans (foreign-key checks too) scan tables that have since
 * grown: the sealed write read 14,500 data-key rows a write that way (docs/performance.md).
 */
export async function settleStatistics(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('vacuum analyze');
  } finally {
    await client.end();
  }
}

/** Transactions and tuples PostgreSQL counted for one database (read from another one's session). */
export async function databaseActivity(adminUrl, database) {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rows } = await client.query(
      `select xact_commit + xact_rollback as xacts, tup_returned + tup_fetched as tuples
       from pg_stat_database where datname = $1`,
      [database],
    );
    return { xacts: Number(rows[0].xacts), tuples: Number(rows[0].tuples) };
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------------------
// Child processes

/**
 * Starts `node <script>` with `env` (plus PATH), output to bench/results/logs/<name>.log. With
 * `--profile`, the child writes a CPU profile when it exits (summarised by `profileSummary`).
 */
export function startChild(name, script, env, { args = [], profile = PROFILE, nodeArgs = [] } = {}) {
  const logFile = join(RESULTS, 'logs', `${name}.log`);
  const profileDir = join(RESULTS, 'profiles', name);
  const node = [...nodeArgs];
  if (profile) {
    // A fresh directory: profileSummary reads every profile in it, and an earlier run's would mix in.
    rmSync(profileDir, { recursive: true, force: true });
    node.push('--cpu-prof', `--cpu-prof-dir=${profileDir}`);
  }
  // The child writes its output straight to the file: relaying it here would take CPU from the load
  // generator, which runs in this process, and only while the product logs (a rejection's warning line).
  const fd = openSync(logFile, 'w');
  const child = spawn(process.execPath, [...node, script, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['pipe', fd, fd],
  });
  closeSync(fd);
  /** The first MiB of the child's output (start-up lines and results come first). */
  const text = () => {
    const head = Buffer.alloc(1_000_000);
    const file = openSync(logFile, 'r');
    try {
      return head.subarray(0, readSync(file, head, 0, head.length, 0)).toString('utf8');
    } finally {
      closeSync(file);
    }
  };
  const exited = new Promise((done) => child.once('exit', (code, signal) => done(code ?? signal)));
  const handle = {
    name,
    child,
    pid: child.pid,
    logFile,
    profileDir,
    output: text,
    async waitFor(pattern, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        const match = pattern.exec(text());
        if (match !== null) return match;
        if (child.exitCode !== null) break;
        await sleep(50);
      }
      throw new Error(`${name}: no ${String(pattern)} in its output (see ${logFile}):\n${text().slice(-2000)}`);
    },
    /** SIGTERM (a CPU profile is written on a clean exit), SIGKILL after `timeoutMs`. */
    async stop(timeoutMs = 20_000) {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      child.kill('SIGTERM');
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
    /** CPU time the process has used so far (user + system, all threads), in microseconds, from /proc. */
    cpuMicros() {
      return cpuMicrosOf(readFileSync(`/proc/${child.pid}/stat`, 'utf8'));
    },
    /** Resident set size in KiB, from /proc. */
    rssKiB() {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
    },
  };
  onCleanup(() => handle.stop());
  return handle;
}

/**
 * CPU time (user + system, µs) used so far by every PostgreSQL process on this machine, from /proc: one
 * side's runs alone, when sides alternate on one server (other databases' work counts too). A backend that
 * exits takes its time out of the sum; the postmaster's waited-for children's time puts it back.
 */
export function postgresCpuMicros() {
  let micros = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    let stat;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // Gone meanwhile.
    }
    if (stat.includes('(postgres)')) micros += cpuMicrosOf(stat, true);
  }
  return micros;
}

/** User + system CPU time, µs, of a `/proc/<pid>/stat` line, with its exited children's when `children`. */
function cpuMicrosOf(stat, children = false) {
  // Fields after the command name (which may hold spaces) start at the last ')'; utime and stime are 14 and
  // 15, cutime and cstime (children waited for) 16 and 17.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const own = Number(fields[11]) + Number(fields[12]);
  return ((children ? own + Number(fields[13]) + Number(fields[14]) : own) * 1e6) / CLOCK_TICKS;
}

export function sleep(ms) {
  return new Promise((done) => setTimeout(done, ms));
}

async function waitHttp(url, child, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.child.exitCode !== null) throw new Error(`${child.name} exited:\n${child.output().slice(-3000)}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // Not listening yet.
    }
    await sleep(100);
  }
  throw new Error(`${child.name} not ready at ${url} after ${timeoutMs / 1000} s:\n${child.output().slice(-3000)}`);
}

/**
 * Starts a product process from dist/ (`api` or `controller`) on a free port of 127.0.0.1, with the
 * bench issuer's JWKS file, and waits for /health/ready. `logLevel` defaults to the product's own default
 * (`info`, a line per request), so headline figures compare shipped defaults; BENCH_LOG_LEVEL overrides it.
 */
export async function startProduct(
  kind,
  { databaseUrl, issuer, name = kind, env = {}, profile = PROFILE, logLevel = PRODUCT_LOG_LEVEL },
) {
  const port = await freePort();
  const child = startChild(
    name,
    join(DIST, 'apps', kind, 'main.js'),
    {
      DATABASE_URL: databaseUrl,
      JWT_JWKS_FILE: issuer.jwksFile,
      JWT_ISSUER: ISSUER,
      JWT_AUDIENCE: AUDIENCE,
      LOG_LEVEL: logLevel,
      LISTEN_HOST: '127.0.0.1',
      NODE_ENV: 'production',
      BINDERY_DATA_DIR: join(RESULTS, 'data'),
      CONTROLLER_HOST_ID: 'bench-host',
      // Production needs a key ring for config values (DESIGN 17); the api as shipped seals them.
      CONFIG_KEYRING_FILE: benchKeyRing(),
      [kind === 'api' ? 'API_PORT' : 'CONTROLLER_PORT']: String(port),
      ...env,
    },
    { profile },
  );
  const url = `http://127.0.0.1:${port}`;
  await waitHttp(`${url}/health/ready`, child);
  return { ...child, url, port };
}

let keyRing;

/** The bench's CONFIG_KEYRING_FILE (mode 0600, one random key), shared by every product process of a run. */
export function benchKeyRing() {
  if (keyRing === undefined) {
    mkdirSync(join(RESULTS, 'data'), { recursive: true });
    keyRing = join(RESULTS, 'data', `config-keyring-${process.pid}`);
    writeFileSync(keyRing, `bench: ${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    onCleanup(() => rmSync(keyRing, { force: true }));
  }
  return keyRing;
}

/** Starts one of the bench's own servers (`bench/<script>`); it prints `LISTENING <port>` when ready. */
export async function startBenchServer(name, script, env) {
  const child = startChild(name, join(BENCH, script), env);
  const [, port] = await child.waitFor(/LISTENING (\d+)/);
  return { ...child, url: `http://127.0.0.1:${port}`, port: Number(port) };
}

// ---------------------------------------------------------------------------------------------------
// Load

/**
 * One autocannon run, bounded in time. Answers requests per second, latency percentiles (ms), and the
 * status codes seen, so a benchmark can prove its requests got the answer it meant to measure.
 */
export function load(options) {
  return new Promise((done, fail) => {
    const instance = autocannon(
      { timeout: 10, ...options, duration: options.duration ?? (SMOKE ? 3 : 10) },
      (error, result) => {
        if (error) return fail(error);
        const statuses = {};
        for (const [code, { count }] of Object.entries(result.statusCodeStats ?? {})) statuses[code] = count;
        done({
          rps: result.requests.average,
          total: result.requests.total,
          p50: result.latency.p50,
          p99: result.latency.p99,
          errors: result.errors + result.timeouts,
          statuses,
        });
      },
    );
    onCleanup(() => instance.stop());
  });
}

/** Fails loudly when a run answered anything but `status` (a benchmark of errors measures nothing). */
export function expectStatuses(what, run, allowed) {
  const bad = Object.entries(run.statuses).filter(([code]) => !allowed.includes(Number(code)));
  if (bad.length > 0 || run.errors > 0 || run.total === 0) {
    throw new Error(
      `${what}: expected only ${allowed.join('/')}, got ${JSON.stringify(run.statuses)}, ${run.errors} errors`,
    );
  }
}

/**
 * Runs each side in turn (`rounds` times each, the order flipping every round so none always
 * runs on a warmer machine) and returns every run of each.
 */
export async function alternate(rounds, ...sides) {
  const runs = sides.map(() => []);
  for (let round = 0; round < rounds; round += 1) {
    // Forward on even rounds, backward on odd ones: no side always runs first or last.
    const order = sides.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order) runs[i].push(await sides[i](round));
  }
  return runs;
}

// ---------------------------------------------------------------------------------------------------
// Profiles

/** The top self-time functions of the CPU profiles a child wrote (`--profile`). */
export function profileSummary(handle, top = 15) {
  if (!existsSync(handle.profileDir)) return [];
  const files = readdirSync(handle.profileDir).filter((f) => f.endsWith('.cpuprofile'));
  const self = new Map();
  let totalUs = 0;
  for (const file of files) {
    const profile = JSON.parse(readFileSync(join(handle.profileDir, file), 'utf8'));
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const deltas = profile.timeDeltas ?? [];
    for (let i = 0; i < profile.samples.length; i += 1) {
      const node = byId.get(profile.samples[i]);
      const dt = deltas[i] ?? 0;
      const frame = node.callFrame;
      // Shares of the time the process was busy: waiting for the next request is not a cost.
      if (frame.functionName === '(idle)') continue;
      totalUs += dt;
      const where =
        frame.url === ''
          ? ''
          : ` ${frame.url.replace(/^file:\/\//, '').replace(ROOT + '/', '')}:${frame.lineNumber + 1}`;
      const key = `${frame.functionName || '(anonymous)'}${where}`;
      self.set(key, (self.get(key) ?? 0) + dt);
    }
  }
  return [...self.entries()]
    .sort((x, y) => y[1] - x[1])
    .slice(0, top)
    .map(([fn, us]) => `${((100 * us) / totalUs).toFixed(1).padStart(5)}%  ${fn}`);
}

export function writeResultFile(name, text) {
  const file = join(RESULTS, name);
  writeFileSync(file, text);
  return file;
}
