import { execFile, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { runCommand, untilReady, type Spawned } from './processes.js';
import { ISSUER, writeJwksFile } from './tokens.js';

/**
 * The release now in production (deploy/previous-release.json), built once from git into a cache directory in
 * the system's temporary directory, so tests can run its processes against the current schema (DESIGN 15).
 */
export interface PreviousRelease {
  readonly version: string;
  readonly commit: string;
  /** The built tree: `git archive` of the commit, its own node_modules and dist/. */
  readonly root: string;
  readonly apiMain: string;
  readonly controllerMain: string;
}

const sh = promisify(execFile);
const REPO = resolve('.');
/** Written last: a directory without it is a build that was interrupted. */
const MARKER = '.bindery-release-built';
/** A cold `npm ci` and build of the old tree (jest timeouts of callers allow for it). */
export const PREVIOUS_RELEASE_BUILD_MS = 15 * 60_000;

export function previousReleaseManifest(): { version: string; commit: string } {
  const manifest = JSON.parse(readFileSync(join(REPO, 'deploy/previous-release.json'), 'utf8')) as {
    version?: unknown;
    commit?: unknown;
  };
  if (
    typeof manifest.version !== 'string' ||
    typeof manifest.commit !== 'string' ||
    !/^[0-9a-f]{40}$/.test(manifest.commit)
  )
    throw new Error('deploy/previous-release.json needs "version" and a 40-hex "commit"');
  return { version: manifest.version, commit: manifest.commit };
}

let building: Promise<PreviousRelease> | undefined;

/** The previous release, built on first use (minutes) and reused from the cache afterwards. */
export function previousRelease(): Promise<PreviousRelease> {
  building ??= build();
  return building;
}

async function build(): Promise<PreviousRelease> {
  const { version, commit } = previousReleaseManifest();
  const root = join(tmpdir(), `bindery-release-${commit}`);
  const release: PreviousRelease = {
    version,
    commit,
    root,
    apiMain: join(root, 'dist/apps/api/main.js'),
    controllerMain: join(root, 'dist/apps/controller/main.js'),
  };
  if (existsSync(join(root, MARKER))) return release;
  await sh('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: REPO }).catch(() => {
    throw new Error(
      `the previous release's commit ${commit} (v${version}, deploy/previous-release.json) is not in this ` +
        'clone: fetch the full history (git fetch --unshallow) or fix the manifest',
    );
  });
  // Built beside the cache and renamed into place, so a reader never sees a half-built tree.
  const partial = `${root}.partial-${process.pid}`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  try {
    const archive = 'git -C "$0" archive --format=tar "$1" | tar -x -C "$2"';
    await step('bash', ['-o', 'pipefail', '-c', archive, REPO, commit, partial], REPO);
    await step('npm', ['ci', '--no-audit', '--no-fund', '--prefer-offline'], partial);
    await step('npm', ['run', 'build'], partial);
    for (const main of [release.apiMain, release.controllerMain]) {
      const built = main.replace(root, partial);
      if (!existsSync(built)) throw new Error(`the previous release's build made no ${built}`);
    }
    await writeFile(join(partial, MARKER), `${version} ${commit}\n`);
    // Another run may have finished first: keep its tree (it may be running), else replace an interrupted one.
    if (!existsSync(join(root, MARKER))) {
      await rm(root, { recursive: true, force: true });
      await rename(partial, root);
    }
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
  return release;
}

/** Runs a build step; a failure carries the end of its output. */
function step(command: string, args: string[], cwd: string): Promise<void> {
  // The test runner's flags (jest's --experimental-vm-modules) are not the old build's.
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (output += c.toString('utf8')));
    child.once('error', fail);
    child.once('exit', (code) =>
      code === 0
        ? done()
        : fail(new Error(`previous release: \`${command} ${args.join(' ')}\` exited ${code}:\n${output.slice(-4000)}`)),
    );
  });
}

/** What the old release itself says it serves: its JSON-RPC methods and the capability scopes it knows. */
export interface ReleaseSurface {
  readonly methods: readonly string[];
  readonly capabilities: readonly string[];
}

/** Read from the old build's own modules (decorator metadata, exported list), in a process of its own. */
export async function releaseSurface(release: PreviousRelease): Promise<ReleaseSurface> {
  const script = `
    await import('reflect-metadata');
    const { RegistryGateway } = await import('./dist/apps/controller/registry/registry.gateway.js');
    const { CAPABILITIES } = await import('./dist/libs/platform/index.js');
    const proto = RegistryGateway.prototype;
    const methods = Object.getOwnPropertyNames(proto)
      .map((name) => (typeof proto[name] === 'function' ? Reflect.getMetadata('message', proto[name]) : undefined))
      .filter((m) => typeof m === 'string');
    process.stdout.write(JSON.stringify({ methods, capabilities: CAPABILITIES }));`;
  const { stdout } = await sh(process.execPath, ['--input-type=module', '-e', script], { cwd: release.root });
  const surface = JSON.parse(stdout) as ReleaseSurface;
  // `rpc.*` names are the adapter's internal routes for unknown methods and bad frames, not methods.
  return { ...surface, methods: surface.methods.filter((m) => !m.startsWith('rpc.')) };
}

export interface Route {
  readonly method: string;
  readonly url: string;
}

/** The routes a process mapped, from Nest's `Mapped {/path, METHOD} route` lines (LOG_LEVEL info or lower). */
export function mappedRoutes(output: string): Route[] {
  return [...output.matchAll(/Mapped \{([^,}]+), ([A-Z]+)\} route/g)].map(([, url, method]) => ({
    url: url ?? '',
    method: method ?? '',
  }));
}

/**
 * Starts one of the old release's entry points as `startBuilt` starts the current one (same settings, test
 * issuer's keys), logging at info so its route table is in the output; resolves once it is ready on `port`.
 */
export async function startRelease(main: string, port: number, env: Record<string, string>): Promise<Spawned> {
  const spawned = runCommand(process.execPath, [main], {
    LISTEN_HOST: '127.0.0.1',
    JWT_JWKS_FILE: writeJwksFile(),
    JWT_ISSUER: ISSUER,
    LOG_LEVEL: 'info',
    ...env,
  });
  return untilReady(spawned, main, port);
}
