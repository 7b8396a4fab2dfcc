import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { migrate } from '#database';
import { unique } from '../support/api.js';
import { testDatabaseEnv } from '../support/database.js';
import { freePort, run, startBuilt, type Spawned } from '../support/processes.js';
import { ISSUER, writeIssuerKeyFile } from '../support/tokens.js';

/**
 * `npm run example:runtime` twice against the built api (with its issuer) and controller, as a newcomer
 * runs it beside `npm start`: the second run is an instance of its own (it never takes over the first
 * one's registration), and `--watch SERVICE` prints the node set on every change (discovery/subscribe,
 * discovery/changed).
 */
describe('example:runtime --watch, and two runs at once', () => {
  const host = unique('ex-host');
  const serviceId = unique('ex-svc');
  const running: Spawned[] = [];
  let exampleEnv: Record<string, string>;

  beforeAll(async () => {
    await migrate(process.env.DATABASE_SESSION_URL || (process.env.DATABASE_URL ?? ''));
    const apiPort = await freePort();
    const controllerPort = await freePort();
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    const issuer = { JWT_JWKS_FILE: '', TOKEN_ISSUER_KEY_FILE: writeIssuerKeyFile().file, JWT_ISSUER: ISSUER };
    running.push(
      await startBuilt('apps/api/main.js', apiPort, { ...issuer, API_PORT: String(apiPort), CONTROLLER_HOST_ID: host }),
    );
    running.push(
      await startBuilt('apps/controller/main.js', controllerPort, {
        JWT_JWKS_FILE: '',
        JWT_JWKS_URI: `${apiUrl}/.well-known/jwks.json`,
        JWT_ISSUER: ISSUER,
        CONTROLLER_PORT: String(controllerPort),
        CONTROLLER_HOST_ID: host,
      }),
    );
    // The runtime client, made as an operator makes it: npm run client:create.
    const clientId = unique('ex-client');
    const created = run(
      'scripts/client-create.js',
      ['--id', clientId, '--scope', 'portal.r', '--host', host, '--sid', serviceId, '--env', 'prod'],
      { ...testDatabaseEnv(), ...issuer, CONTROLLER_HOST_ID: host },
    );
    expect({ code: await created.exit(), output: created.output() }).toEqual({
      code: 0,
      output: expect.stringContaining(`client ${clientId} created`),
    });
    exampleEnv = {
      CLIENT_ID: clientId,
      CLIENT_SECRET: /client secret \(shown once\): (\S+)/.exec(created.output())?.[1] ?? '',
      API_URL: apiUrl,
      CONTROLLER_URL: `ws://127.0.0.1:${controllerPort}`,
      RUNTIME_HOST: host,
      SERVICE_ID: serviceId,
      ENV_TAG: 'prod',
    };
  }, 90_000);

  afterAll(async () => {
    for (const spawned of running) {
      spawned.child.kill('SIGKILL');
      await spawned.exit();
    }
  });

  const example = (args: string[]): Spawned => {
    const spawned = run('scripts/example-runtime.js', args, exampleEnv);
    running.push(spawned);
    return spawned;
  };
  const portOf = async (spawned: Spawned): Promise<string> =>
    (await spawned.waitFor(/^instance: 127\.0\.0\.1:(\d+)/m, 20_000))[1] ?? '';

  it('a second run registers an address of its own, and the watching run prints each change', async () => {
    const watcher = example(['--watch', serviceId]);
    const first = await portOf(watcher);
    const node = (port: string) => `127\\.0\\.0\\.1:${port} 1\\.0\\.1`;
    const set = `${serviceId} \\(env prod\\)`;
    await watcher.waitFor(new RegExp(`^example:runtime: watching ${set}: 1 node: ${node(first)}$`, 'm'), 20_000);

    // Not --once: a run that registers and leaves before the watcher's replica reads the set may never show in it
    // (reads are coalesced, DESIGN 8), so this one stays until the watcher printed it, then leaves on Ctrl-C.
    const second = example([]);
    const other = await portOf(second);
    expect(other).not.toBe(first);
    await second.waitFor(/^registered; Ctrl-C deregisters and exits$/m, 20_000);
    if (first === '9000') expect(second.output()).toContain('(port 9000 is taken, by another example:runtime?)');
    // The controller listed the second run at its own address, and the first one is still there beside it.
    expect(second.output()).toMatch(new RegExp(`lists this instance as .*"port":${other}[,}]`));
    const changed = `^example:runtime: discovery/changed: ${set}`;
    // Its version may still be 1.0.0 in a change: the set is read again on each notification.
    const others = `127\\.0\\.0\\.1:${other} 1\\.0\\.[01]`;
    const both = [`${node(first)}, ${others}`, `${others}, ${node(first)}`].join('|');
    await watcher.waitFor(new RegExp(`${changed}: 2 nodes: (${both})$`, 'm'), 20_000);
    second.child.kill('SIGINT');
    expect(await second.exit()).toBe(0);
    // The second run deregistered on its way out; the first one's registration was never touched.
    await watcher.waitFor(new RegExp(`${changed}: 1 node: ${node(first)}$`, 'm'), 20_000);
    expect(watcher.child.exitCode).toBeNull();

    // A port asked for that is taken is refused, not shared.
    const taken = example(['--once', '--port', first]);
    expect(await taken.exit()).toBe(1);
    expect(taken.output()).toBe(`example:runtime: 127.0.0.1:${first} is in use: choose another --port\n`);
  }, 90_000);
});
