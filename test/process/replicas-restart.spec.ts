import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { setTimeout as delay } from 'node:timers/promises';
import pg from 'pg';
import { changesOf, instanceIdOf, RpcClient, WS_PATH, waitFor } from '../support/controller.js';
import {
  freePort,
  restartablePostgres,
  startBuilt,
  type RestartablePostgres,
  type Spawned,
} from '../support/processes.js';
import { token } from '../support/tokens.js';

/**
 * DESIGN 8.1: PostgreSQL restarts under two controller replicas, down for twice their lease. Both
 * reconnect by themselves, neither reaps the other (leases are judged by the database clock and renewed
 * before anyone reaps), no registration is lost and subscriptions go on.
 */
const LEASE_MS = 1500;
const HOST = 'h-replicas-restart';

describe('a database restart under two controller replicas', () => {
  let server: RestartablePostgres;
  let url: string;
  const replicas: { process: Spawned; port: number }[] = [];

  beforeAll(async () => {
    server = await restartablePostgres();
    url = server.url;
    for (let n = 0; n < 2; n++) {
      const controllerPort = await freePort();
      const process = await startBuilt('apps/controller/main.js', controllerPort, {
        DATABASE_URL: url,
        CONTROLLER_HOST_ID: HOST,
        CONTROLLER_PORT: String(controllerPort),
        REGISTRY_LEASE_MS: String(LEASE_MS),
      });
      replicas.push({ process, port: controllerPort });
    }
  }, 120_000);

  afterAll(async () => {
    for (const replica of replicas) replica.process.child.kill('SIGKILL');
    await Promise.all(replicas.map((replica) => replica.process.exit()));
    await server?.remove();
  });

  const connect = async (index: number, serviceId: string) =>
    RpcClient.connect(`ws://127.0.0.1:${replicas[index]?.port}${WS_PATH}`, {
      token: await token({ sub: 'rt', sid: serviceId, host: HOST }),
    });

  const query = async <T extends pg.QueryResultRow>(sql: string, params: unknown[]): Promise<T[]> => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<T>(sql, params)).rows;
    } finally {
      await client.end();
    }
  };

  const statusOf = async (id: string): Promise<string | undefined> =>
    (await query<{ status: string }>('select status from runtime_instance where runtime_instance_id = $1', [id]))[0]
      ?.status;

  /**
   * The time of each replica's last renewal if both renewed after holding their leases without a gap for a
   * whole lease (each reaps after such a renewal, DESIGN 8.1); undefined while one has not yet.
   */
  const reapingSince = async (): Promise<Map<string, string> | undefined> => {
    const rows = await query<{ controller_id: string; renewed: string; reaping: boolean }>(
      `select controller_id, renewed_ts::text as renewed,
         renewed_ts - held_since_ts >= $2 * interval '1 millisecond' as reaping
       from controller_lease where host_id = $1`,
      [HOST, LEASE_MS],
    );
    if (rows.length !== replicas.length || !rows.every((row) => row.reaping)) return undefined;
    return new Map(rows.map((row) => [row.controller_id, row.renewed]));
  };

  /**
   * Until both replicas have renewed as reapers three times, each time anew: the renewal after one that let
   * it reap comes once that reap is done (a replica's ticks never overlap). Three, because the first rows
   * read after the database came back are still those from before it stopped.
   */
  const untilBothReaped = async (): Promise<void> => {
    let last: Map<string, string> | undefined;
    for (let round = 1; round <= 3; round++) {
      const before = last;
      await waitFor(
        async () => {
          const now = await reapingSince();
          if (now === undefined || [...now].some(([id, renewed]) => renewed === before?.get(id))) return false;
          last = now;
          return true;
        },
        `both replicas to renew as reapers (${round} of 3)`,
        20_000,
      );
    }
  };

  it('both reconnect without a restart, reap nobody, keep every registration and keep notifying', async () => {
    const serviceId = 'svc-rr';
    const runtime = await connect(0, serviceId);
    const kept = instanceIdOf(await runtime.call('service/register', { serviceId, address: '10.9.0.1', port: 1 }));
    const watcher = await connect(1, serviceId);
    const answer = await watcher.call('discovery/subscribe', { serviceId });
    const subscription = answer.result?.subscriptionId as string;
    // Both have held their leases long enough to reap: the restart is what must not make them.
    await untilBothReaped();

    await server.stop();
    // The outage itself is the scenario, not a wait for an event: down past every lease's expiry.
    await delay(2 * LEASE_MS);
    await server.start();
    for (const { port } of replicas) {
      const ready = async (): Promise<boolean> => (await fetch(`http://127.0.0.1:${port}/health/ready`)).status === 200;
      await waitFor(ready, `port ${port} ready again`, 20_000, 100);
    }
    // Each reaps again only after a whole lease held on the new session: any wrong reaping is done once both have.
    await untilBothReaped();
    expect(await statusOf(kept)).toBe('connected');
    expect(changesOf(watcher, subscription)).toEqual([]);

    // The subscription made before the restart still hears of changes made on the other replica.
    const late = await connect(0, serviceId);
    const added = instanceIdOf(await late.call('service/register', { serviceId, address: '10.9.0.2', port: 2 }));
    // A wrong reaping would have been told first (notices come in commit order), so this would not be the first.
    await waitFor(() => changesOf(watcher, subscription).length === 1, 'the notification after the restart');
    const nodes = (changesOf(watcher, subscription)[0]?.nodes ?? []) as { runtimeInstanceId: string }[];
    expect(nodes.map((n) => n.runtimeInstanceId)).toEqual([kept, added]);

    await Promise.all([runtime.close(), late.close(), watcher.close()]);
    for (const replica of replicas) expect(replica.process.child.exitCode).toBeNull();
  }, 90_000);
});
