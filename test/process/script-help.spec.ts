import { readdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { dataDir, requireBuild, runCommand } from '../support/processes.js';

/**
 * Every script answers `--help` and `-h` through npm with its usage and exit 0, and starts nothing: every
 * address it could reach (database, api, controller) points at one listener that counts connections, and
 * its (own) data dir stays empty.
 */
describe('npm run <script> -- --help', () => {
  let listener: Server;
  let connections = 0;
  let env: Record<string, string>;

  beforeAll(async () => {
    requireBuild();
    listener = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const address = listener.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    env = {
      HOME: process.env.HOME ?? '/root',
      DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/none`,
      API_URL: `http://127.0.0.1:${port}`,
      CONTROLLER_URL: `ws://127.0.0.1:${port}`,
      CLIENT_SECRET: 'not-used',
      API_PORT: '0',
      CONTROLLER_PORT: '0',
    };
  });
  afterAll(() => new Promise<void>((resolve) => listener.close(() => resolve())));

  const scripts: [string, RegExp][] = [
    ['start', /^usage: npm start\b/m],
    ['start:dev', /^usage: npm start\b/m],
    ['migration:run', /^usage: npm run migration:run\b/m],
    ['token', /^usage: npm run token\b/m],
    ['config:import', /^usage: npm run config:import\b/m],
    ['client:create', /^usage: npm run client:create\b/m],
    ['keys:rewrap', /^usage: npm run keys:rewrap\b/m],
    ['keys:encrypt-existing', /^usage: npm run keys:rewrap\b/m],
    ['example:runtime', /^usage: npm run example:runtime\b/m],
    ['bench', /^usage: npm run bench\b/m],
  ];
  const cases = scripts.flatMap(([script, usage]) => [
    [script, '--help', usage] as const,
    [script, '-h', usage] as const,
  ]);

  it.each(cases)(
    '%s %s: the usage, exit 0, nothing started',
    async (script, flag, usage) => {
      connections = 0;
      const dir = await dataDir();
      const run = runCommand(
        'npm',
        ['run', script, '--silent', '--', flag],
        { ...env, BINDERY_DATA_DIR: dir },
        process.cwd(),
      );
      // A script that ignores the flag starts a server or a runtime that does not exit: killed, then failed.
      const code = await run.exit(20_000);
      expect({ code, output: run.output() }).toEqual({ code: 0, output: expect.stringMatching(usage) });
      expect(run.output()).not.toMatch(/^\s+at /m);
      expect(connections).toBe(0);
      expect(await readdir(dir)).toEqual([]);
    },
    30_000,
  );
});
