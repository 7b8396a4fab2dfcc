import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DEV_MODE_WARNING } from '../../libs/platform/main.js';
import { dataDir, freePort, requireBuild, run, startBuilt, untilReady, type Spawned } from '../support/processes.js';
import { ISSUER, writeJwksFile } from '../support/tokens.js';
import { testKeyRingFile } from '../support/key-ring.js';
import { jsonLines } from '../support/log-lines.js';

/** The built entry points, as `docker compose up` runs them: each says once, at start, when it runs in dev mode (DESIGN 9). */
const ENTRIES = [
  { name: 'api', entry: 'apps/api/main.js', portVariable: 'API_PORT' },
  { name: 'controller', entry: 'apps/controller/main.js', portVariable: 'CONTROLLER_PORT' },
] as const;

interface LogLine {
  readonly level?: number;
  readonly msg?: string;
  readonly context?: string;
  readonly devMode?: boolean;
  readonly issuer?: string;
}

const devModeLines = (spawned: Spawned): LogLine[] =>
  jsonLines<LogLine>(spawned.output(), { others: 'skip' }).filter((l) => /dev mode/i.test(l.msg ?? ''));

/** Runs until ready, then stops it with SIGTERM, so the whole start-up output (and a clean exit) is seen. */
async function startAndStop(spawned: Spawned, port: number): Promise<void> {
  await untilReady(spawned, 'the dev-mode entry', port);
  spawned.child.kill('SIGTERM');
  expect(await spawned.exit()).toBe(0);
}

describe('the dev-mode warning at start', () => {
  let dir: string;

  beforeAll(async () => {
    requireBuild();
    dir = await dataDir();
  });

  afterAll(() => rm(dir, { recursive: true, force: true }));

  it.each(ENTRIES)(
    '$name in dev mode (no key source) writes it exactly once, as a warn JSON line',
    async (entry) => {
      const port = await freePort();
      // What compose passes by default: no JWT_* key source, NODE_ENV unset (development).
      const spawned = run(entry.entry, [], {
        DATABASE_URL: process.env.DATABASE_URL ?? '',
        DATABASE_SESSION_URL: process.env.DATABASE_SESSION_URL ?? '',
        DATABASE_POOL_MODE: process.env.DATABASE_POOL_MODE ?? '',
        BINDERY_DATA_DIR: dir,
        LISTEN_HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        [entry.portVariable]: String(port),
      });
      await startAndStop(spawned, port);
      // The dev issuer is the api's URL (DESIGN 6.5): the controller derives it from API_PORT's default too.
      const apiPort = entry.name === 'api' ? port : 8080;
      expect(devModeLines(spawned)).toEqual([
        expect.objectContaining({
          level: 40,
          context: entry.name,
          devMode: true,
          issuer: `http://localhost:${apiPort}`,
          msg: DEV_MODE_WARNING,
        }),
      ]);
    },
    60_000,
  );

  it.each(ENTRIES)(
    '$name with a key source configured (production-like) writes no such line',
    async (entry) => {
      const port = await freePort();
      const spawned = await startBuilt(entry.entry, port, {
        NODE_ENV: 'production',
        CONFIG_KEYRING_FILE: testKeyRingFile(),
        JWT_JWKS_FILE: writeJwksFile(),
        JWT_ISSUER: ISSUER,
        CONTROLLER_HOST_ID: 'h-prod',
        LOG_LEVEL: 'info',
        [entry.portVariable]: String(port),
      });
      spawned.child.kill('SIGTERM');
      expect(await spawned.exit()).toBe(0);
      // The process did log at start (so the absence means something), just not this line.
      expect(jsonLines<LogLine>(spawned.output(), { others: 'skip' }).length).toBeGreaterThan(0);
      expect(devModeLines(spawned)).toEqual([]);
    },
    60_000,
  );
});
