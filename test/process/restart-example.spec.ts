import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { dataDir, freePort, killGroup, requireBuild, runCommand, type Spawned } from '../support/processes.js';
import { waitFor } from '../support/wait.js';

/**
 * The newcomer's run: `npm start`, `npm run example:runtime` with the printed client line, then `npm start`
 * stopped and started again. The example keeps its client secret (kept in the data dir), says why each
 * attempt failed while Bindery was down, that it reconnected, and goes on renewing its token.
 */
describe('restarting npm start under a running example:runtime', () => {
  let env: Record<string, string>;
  const running: Spawned[] = [];

  beforeAll(async () => {
    requireBuild();
    env = {
      HOME: process.env.HOME ?? '/root',
      BINDERY_DATA_DIR: await dataDir(),
      API_PORT: String(await freePort()),
      CONTROLLER_PORT: String(await freePort()),
      EMBEDDED_POSTGRES_PORT: String(await freePort()),
      LISTEN_HOST: '127.0.0.1',
      // Short tokens: the example renews several times within the test, after the restart too.
      TOKEN_TTL_SEC: '6',
    };
  });
  afterAll(() => running.forEach(killGroup));

  const start = async (): Promise<{ npm: Spawned; client: string }> => {
    const npm = runCommand('npm', ['start', '--silent'], env, process.cwd());
    running.push(npm);
    const client = (await npm.waitFor(/^ {2}(export CLIENT_ID=\S+ CLIENT_SECRET=\S+)$/m, 120_000))[1] ?? '';
    await npm.waitFor(/Ctrl-C stops everything/);
    return { npm, client };
  };
  const stop = async (npm: Spawned): Promise<void> => {
    process.kill(npm.child.pid ?? 0, 'SIGTERM');
    expect(await npm.exit(30_000)).toBe(0);
  };

  it('keeps the secret, reports causes, reconnects and renews', async () => {
    const first = await start();
    expect(first.npm.output()).toContain('its secret is kept in the data dir for the next start');
    const secret = /CLIENT_SECRET=(\S+)/.exec(first.client)?.[1] ?? '';
    const example = runCommand(
      'npm',
      ['run', 'example:runtime', '--silent'],
      {
        ...env,
        CLIENT_ID: 'petstore-dev',
        CLIENT_SECRET: secret,
        API_URL: `http://127.0.0.1:${env.API_PORT}`,
        CONTROLLER_URL: `ws://127.0.0.1:${env.CONTROLLER_PORT}`,
      },
      process.cwd(),
    );
    running.push(example);
    await example.waitFor(/^registered; Ctrl-C deregisters and exits$/m);
    await example.waitFor(/example:runtime: token refreshed on the socket/, 20_000);

    await stop(first.npm);
    await example.waitFor(/example:runtime: disconnected from the controller \(code \d+/);
    const second = await start();
    // The same line as before: what the running example holds still works.
    expect(second.client).toBe(first.client);
    expect(second.npm.output()).toContain('the same secret as the last start');
    await example.waitFor(/example:runtime: reconnected after \d+ attempts? \([\d.]+ s without a connection\)/, 60_000);
    const reconnectedAt = example.output().lastIndexOf('reconnected after');
    await waitFor(
      () => example.output().indexOf('token refreshed', reconnectedAt) !== -1,
      'a token refreshed after the reconnect',
      20_000,
      100,
    );

    const lines = example.output().split('\n');
    // Every failure line names its cause, never a bare "error".
    const failures = lines.filter((line) => / failed: | error: /.test(line));
    for (const line of failures) expect(line).toMatch(/ECONNREFUSED|socket hang up|ECONNRESET|HTTP 50\d|closed/);
    expect(lines).not.toContain('example:runtime: error');
    expect(example.output()).not.toContain('invalid_client');
    expect(example.child.exitCode).toBeNull();
    await stop(second.npm);
  }, 300_000);
});
