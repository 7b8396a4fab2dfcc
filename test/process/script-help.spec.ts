import { readdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { dataDir, requireBuild, runCommand } from '../support/processes.js';

/**
 * Every script answers `--help` and `-h` through npm with its usage and exit 0, and refuses an option or an
 * operand it does not know with one line naming it, the usage and exit 2 (scripts/usage.ts); either way it
 * starts nothing: every address it could reach (database, api, controller) points at one listener that
 * counts connections, and its (own) data dir stays empty.
 */
describe('npm run <script> -- --help, or a mistake', () => {
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
    ['docs:settings', /^usage: npm run docs:settings\b/m],
    ['bench', /^usage: npm run bench\b/m],
  ];
  const cases = scripts.flatMap(([script, usage]) => [
    [script, '--help', usage] as const,
    [script, '-h', usage] as const,
  ]);

  const runScript = async (script: string, args: string[]): Promise<{ code: number | null; output: string }> => {
    connections = 0;
    const dir = await dataDir();
    const run = runCommand(
      'npm',
      ['run', script, '--silent', '--', ...args],
      { ...env, BINDERY_DATA_DIR: dir },
      process.cwd(),
    );
    // A script that ignores the flag starts a server or a runtime that does not exit: killed, then failed.
    const code = await run.exit(20_000);
    expect(run.output()).not.toMatch(/^\s+at /m);
    expect(connections).toBe(0);
    expect(await readdir(dir)).toEqual([]);
    return { code, output: run.output() };
  };

  it.each(cases)(
    '%s %s: the usage, exit 0, nothing started',
    async (script, flag, usage) => {
      expect(await runScript(script, [flag])).toEqual({ code: 0, output: expect.stringMatching(usage) });
    },
    30_000,
  );

  // Every script but bench (which may run a benchmark) and the line it starts its refusals with.
  const refusing: [string, string, RegExp][] = [
    ['start', 'start', /^usage: npm start\b/m],
    ['start:dev', 'start', /^usage: npm start\b/m],
    ['migration:run', 'migration:run', /^usage: npm run migration:run\b/m],
    ['token', 'token', /^usage: npm run token\b/m],
    ['config:import', 'config:import', /^usage: npm run config:import\b/m],
    ['client:create', 'client:create', /^usage: npm run client:create\b/m],
    ['keys:rewrap', 'keys:rewrap', /^usage: npm run keys:rewrap\b/m],
    ['keys:encrypt-existing', 'keys:encrypt-existing', /^usage: npm run keys:rewrap\b/m],
    ['example:runtime', 'example:runtime', /^usage: npm run example:runtime\b/m],
    ['docs:settings', 'docs:settings', /^usage: npm run docs:settings\b/m],
  ];

  it.each(refusing)(
    '%s --no-such-option: one line naming it, then the usage, exit 2, nothing started',
    async (script, name, usage) => {
      const { code, output } = await runScript(script, ['--no-such-option']);
      expect(code).toBe(2);
      expect(output.split('\n')[0]).toBe(`${name}: Unknown option '--no-such-option'`);
      expect(output.split('\n')[1]).toMatch(usage);
    },
    30_000,
  );

  it.each(refusing.filter(([script]) => script !== 'config:import'))(
    '%s with an operand it does not take: refused the same way',
    async (script, name, usage) => {
      const { code, output } = await runScript(script, ['stray']);
      expect(code).toBe(2);
      expect(output.split('\n')[0]).toMatch(new RegExp(`^${name}: Unexpected argument 'stray'`));
      expect(output.split('\n')[1]).toMatch(usage);
    },
    30_000,
  );
});
