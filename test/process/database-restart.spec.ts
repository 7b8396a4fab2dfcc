import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { instanceIdOf, RpcClient, waitFor, WS_PATH } from '../support/controller.js';
import {
  freePort,
  restartablePostgres,
  startBuilt,
  type RestartablePostgres,
  type Spawned,
} from '../support/processes.js';
import { callers, token } from '../support/tokens.js';

/**
 * DESIGN 3 and 8.1: PostgreSQL stops and comes back under a steady write load. Requests meanwhile
 * answer 503 with Retry-After (never another 5xx), both processes reconnect without a restart, and every
 * write answered 201 is in the database afterwards.
 */
describe('a database restart under load', () => {
  let server: RestartablePostgres;
  let url: string;
  let api: Spawned;
  let controller: Spawned;
  let apiPort: number;
  let controllerPort: number;

  beforeAll(async () => {
    server = await restartablePostgres();
    url = server.url;
    [apiPort, controllerPort] = [await freePort(), await freePort()];
    const env = { DATABASE_URL: url, CONTROLLER_HOST_ID: 'h-restart' };
    api = await startBuilt('apps/api/main.js', apiPort, { ...env, API_PORT: String(apiPort) });
    controller = await startBuilt('apps/controller/main.js', controllerPort, {
      ...env,
      CONTROLLER_PORT: String(controllerPort),
    });
  }, 120_000);

  afterAll(async () => {
    const all = [api, controller].filter((spawned) => spawned !== undefined);
    for (const spawned of all) spawned.child.kill('SIGKILL');
    await Promise.all(all.map((spawned) => spawned.exit()));
    await server?.remove();
  });

  it('answers 503 + Retry-After while it is down, reconnects by itself and keeps every 201', async () => {
    const admin = await callers.admin();
    const answers = new Map<string, number>();
    const answered = (status: number): number => [...answers.values()].filter((s) => s === status).length;
    const unexpected: string[] = [];
    let stop = false;
    let n = 0;
    // Never longer than the test, even when an assertion below fails before `stop` is set.
    const deadline = Date.now() + 90_000;
    const writer = async (): Promise<void> => {
      while (!stop && Date.now() < deadline) {
        const tagName = `restart-${n++}`;
        try {
          const res = await fetch(`http://127.0.0.1:${apiPort}/tags`, {
            method: 'POST',
            headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
            body: JSON.stringify({ tagName }),
          });
          answers.set(tagName, res.status);
          if (res.status === 503 && res.headers.get('retry-after') === null) unexpected.push('503 without Retry-After');
          if (res.status !== 201 && res.status !== 503) unexpected.push(`${res.status} ${await res.text()}`);
          if (res.status === 503) await delay(50);
        } catch (error) {
          unexpected.push(`no answer: ${(error as Error).message}`);
          await delay(100);
        }
      }
    };
    const writers = Array.from({ length: 4 }, () => writer());
    try {
      // The load is on: writes are being answered.
      await waitFor(() => answered(201) >= 5, 'writes before the stop', 20_000);
      await server.stop();
      // The api has noticed: writes and readiness answer 503.
      await waitFor(() => answered(503) > 0, 'a write answered 503', 20_000);
      let retryAfter: string | null = null;
      await waitFor(
        async () => {
          const ready = await fetch(`http://127.0.0.1:${apiPort}/health/ready`);
          await ready.arrayBuffer();
          retryAfter = ready.headers.get('retry-after');
          return ready.status === 503;
        },
        'the api to answer not ready',
        20_000,
      );
      expect(retryAfter).not.toBeNull();
      const lookupDown = await RpcClient.connect(`ws://127.0.0.1:${controllerPort}${WS_PATH}`, {
        token: await token({ sid: 'svc-r', host: 'h-restart' }),
      });
      const down = await lookupDown.call('discovery/lookup', { serviceId: 'svc-r' });
      expect(down.error).toMatchObject({ code: -32004, data: { status: 503 } });
      await lookupDown.close();

      await server.start();
      // Both processes find the database again by themselves.
      for (const port of [apiPort, controllerPort]) {
        const ready = async (): Promise<boolean> =>
          (await fetch(`http://127.0.0.1:${port}/health/ready`)).status === 200;
        await waitFor(ready, `port ${port} ready again`, 20_000, 200);
      }
      // Writes go on after it: the load has more 201s than it had when the database came back.
      const createdBefore = answered(201);
      await waitFor(() => answered(201) >= createdBefore + 5, 'writes after the restart', 20_000);
    } finally {
      stop = true;
      await Promise.all(writers);
    }

    expect(unexpected).toEqual([]);
    const statuses = [...answers.values()];
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThan(10);
    const acknowledged = [...answers].filter(([, s]) => s === 201).map(([name]) => name);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ tag_name: string }>('select tag_name from tag where tag_name = any($1)', [
        acknowledged,
      ]);
      expect(rows.length).toBe(acknowledged.length);
    } finally {
      await client.end();
    }

    // The controller serves again: a runtime registers.
    const runtime = await RpcClient.connect(`ws://127.0.0.1:${controllerPort}${WS_PATH}`, {
      token: await token({ sid: 'svc-r', host: 'h-restart' }),
    });
    instanceIdOf(await runtime.call('service/register', { serviceId: 'svc-r', address: '10.0.0.9', port: 80 }));
    await runtime.close();
    // Neither process was restarted.
    expect(api.child.exitCode).toBeNull();
    expect(controller.child.exitCode).toBeNull();
  }, 120_000);
});
