import { cp, mkdtemp, readFile, symlink, appendFile, chmod } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { dataDir, freePort, killGroup, runCommand, type Spawned } from '../support/processes.js';
import { ISSUER, writeJwksFile } from '../support/tokens.js';
import { waitFor } from '../support/wait.js';

// A copy of the sources with the project's node_modules: building and watching there never rewrites the
// dist/ other test files start processes from, and editing a file there leaves the checkout clean.
const COPIED = ['apps', 'libs', 'scripts', 'package.json', 'nest-cli.json', 'tsconfig.json', 'tsconfig.build.json'];
let root: string;
const nest = (): string => join(root, 'node_modules', '.bin', 'nest');
const running: Spawned[] = [];

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'bindery-nest-'));
  // The embedded PostgreSQL (running as `postgres` under root) must reach node_modules through this path.
  await chmod(root, 0o755);
  for (const entry of COPIED) await cp(resolve(entry), join(root, entry), { recursive: true });
  await symlink(resolve('node_modules'), join(root, 'node_modules'), 'dir');
});

afterAll(async () => {
  for (const spawned of running) killGroup(spawned);
  await Promise.all(running.map((s) => s.exit(5_000)));
});

async function ready(url: string, spawned: Spawned, timeoutMs = 90_000): Promise<void> {
  const answers = async (): Promise<boolean> => {
    if (spawned.child.exitCode !== null) throw new Error('exited');
    return fetch(url).then(
      (r) => r.ok,
      () => false,
    );
  };
  await waitFor(answers, url, timeoutMs, 200).catch((error: unknown) => {
    throw new Error(`${url} not ready (${String(error)}):\n${spawned.output()}`);
  });
}

async function occurrences(pattern: RegExp, read: () => Promise<string> | string, atLeast: number): Promise<void> {
  const enough = async (): Promise<boolean> => ((await read()).match(pattern)?.length ?? 0) >= atLeast;
  await waitFor(enough, `${atLeast} ${String(pattern)}`, 40_000, 250).catch(async () => {
    throw new Error(`fewer than ${atLeast} ${String(pattern)} in:\n${await read()}`);
  });
}

const STARTED = /Nest application successfully started/g;

describe('Nest monorepo tooling (nest-cli.json)', () => {
  it('nest build api and nest build controller write the dist/apps/*/main.js entry points', async () => {
    for (const project of ['api', 'controller']) {
      const build = runCommand(nest(), ['build', project], {}, root);
      expect(await build.exit(120_000)).toBe(0);
      expect(existsSync(join(root, 'dist', 'apps', project, 'main.js'))).toBe(true);
    }
    expect(existsSync(join(root, 'dist', 'libs', 'token-binding', 'index.js'))).toBe(true);
  }, 240_000);

  it('nest start api --watch serves, and restarts when a source file changes', async () => {
    const port = await freePort();
    const api = runCommand(
      nest(),
      ['start', 'api', '--watch'],
      {
        DATABASE_URL: process.env.DATABASE_URL ?? '',
        DATABASE_SESSION_URL: process.env.DATABASE_SESSION_URL ?? '',
        DATABASE_POOL_MODE: process.env.DATABASE_POOL_MODE ?? '',
        API_PORT: String(port),
        LISTEN_HOST: '127.0.0.1',
        JWT_JWKS_FILE: writeJwksFile(),
        JWT_ISSUER: ISSUER,
        CONTROLLER_HOST_ID: 'h-nest',
      },
      root,
    );
    running.push(api);
    await ready(`http://127.0.0.1:${port}/health/ready`, api);
    await occurrences(STARTED, api.output, 1);
    await appendFile(join(root, 'apps', 'api', 'api.module.ts'), '\n// touched by the watch test\n');
    await occurrences(STARTED, api.output, 2);
    await ready(`http://127.0.0.1:${port}/health/ready`, api);
  }, 240_000);

  it('npm run start:dev runs both processes in watch mode against the embedded PostgreSQL', async () => {
    const dir = await dataDir();
    const env = {
      BINDERY_DATA_DIR: dir,
      API_PORT: String(await freePort()),
      CONTROLLER_PORT: String(await freePort()),
      EMBEDDED_POSTGRES_PORT: String(await freePort()),
      LISTEN_HOST: '127.0.0.1',
    };
    const build = runCommand(
      process.execPath,
      [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
      {},
      root,
    );
    expect(await build.exit(120_000)).toBe(0);
    const dev = runCommand(process.execPath, [join(root, 'dist', 'scripts', 'dev.js'), '--watch'], env, root);
    running.push(dev);
    await dev.waitFor(/Watching apps\/ and libs\//, 120_000);
    const log = (name: string) => () => readFile(join(dir, 'logs', `${name}.log`), 'utf8').catch(() => '');
    await occurrences(STARTED, log('api'), 1);
    await occurrences(STARTED, log('controller'), 1);
    // A change in a shared lib restarts both processes.
    await appendFile(join(root, 'libs', 'platform', 'index.ts'), '\n// touched by the watch test\n');
    await occurrences(STARTED, log('api'), 2);
    await occurrences(STARTED, log('controller'), 2);
    await ready(`http://127.0.0.1:${env.API_PORT}/health/ready`, dev);
    await ready(`http://127.0.0.1:${env.CONTROLLER_PORT}/health/ready`, dev);
    dev.child.kill('SIGTERM');
    expect(await dev.exit(30_000)).toBe(0);
    expect(existsSync(join(dir, 'postgres', 'postmaster.pid'))).toBe(false);
  }, 300_000);
});
