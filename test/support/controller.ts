import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import pg from 'pg';
import { migrate, queryObserver } from '#database';
import { createControllerApp } from '../../apps/controller/app.js';
import { PendingWrites } from '../../apps/controller/registry/sessions/pending-writes.js';
import { RegistryGateway } from '../../apps/controller/registry/registry.gateway.js';
import { RegistryMetrics } from '../../apps/controller/registry/registry-metrics.js';
import { testSettings, unique } from './api.js';
import { LogCapture } from './log-lines.js';
import { recordRoutes, type RouteRecord } from './route-table.js';
import { RpcClient } from './rpc-client.js';
import { waitFor } from './wait.js';

export const WS_PATH = '/ws/microservice';
export { WAIT_MS, waitFor } from './wait.js';
export * from './rpc-client.js';

export interface TestController {
  readonly app: NestFastifyApplication;
  readonly logs: LogCapture;
  /** Every HTTP route the app registered (Fastify's own table). */
  readonly routes: readonly RouteRecord[];
  readonly hostId: string;
  readonly httpUrl: string;
  readonly wsUrl: string;
  readonly gateway: RegistryGateway;
  /** Waits until the server has seen every socket close and finished the registry writes that caused. */
  quiesce(): Promise<void>;
  close(): Promise<void>;
}

function databaseUrl(): string {
  const url = process.env.DATABASE_URL;
  if (url === undefined || url === '') throw new Error('DATABASE_URL is not set (jest global setup sets it)');
  return url;
}

/**
 * Nest's Logger is process-wide (lines outside a request go to the last app's stream), so every controller
 * a test file starts logs to this one capture; tests find their lines by their unique service ids.
 */
const logs = new LogCapture();

/**
 * The real controller app on the test database, listening on 127.0.0.1 with a free port. Each one gets
 * its own `CONTROLLER_HOST_ID` unless `env` names one, so parallel test files never see each other's
 * instances. The controller never migrates: this helper does it first (idempotent, advisory-locked).
 */
export async function startController(env: Record<string, string> = {}): Promise<TestController> {
  const url = databaseUrl();
  await migrate(process.env.DATABASE_SESSION_URL || url);
  const hostId = env.CONTROLLER_HOST_ID ?? unique('ctl');
  const settings = testSettings({ CONTROLLER_HOST_ID: hostId, ...env });
  const app = await createControllerApp({ settings, databaseUrl: url, logStream: logs });
  const routes = recordRoutes(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.getHttpServer().address() as AddressInfo;
  const gateway = app.get(RegistryGateway);
  return {
    app,
    logs,
    routes,
    hostId,
    httpUrl: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}${WS_PATH}`,
    gateway,
    async quiesce() {
      const wsUrl = `ws://127.0.0.1:${port}${WS_PATH}`;
      await waitFor(
        () => app.get(RegistryMetrics).openConnections() === RpcClient.openTo(wsUrl),
        'the server to see the same open sockets as the clients',
      );
      await app.get(PendingWrites).settled();
    },
    close: () => app.close(),
  };
}

/** A spec file's controller (started before its tests, closed after them) and its view of the registry table. */
export interface RegistryFixture {
  readonly controller: TestController;
  readonly table: RegistryTable;
}

/** Starts the file's controller with `env` in `beforeAll` and closes it and the table in `afterAll`. */
export function registryForFile(env: Record<string, string> = {}): RegistryFixture {
  let controller: TestController | undefined;
  let table: RegistryTable | undefined;
  beforeAll(async () => {
    controller = await startController(env);
    table = new RegistryTable();
  });
  afterAll(async () => {
    await controller?.close();
    await table?.end();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the controller is started in beforeAll');
    return value;
  };
  return {
    get controller() {
      return started(controller);
    },
    get table() {
      return started(table);
    },
  };
}

/** Direct database access for assertions, outside TypeORM so it never counts as the app's SQL. */
export class RegistryTable {
  private readonly pool = new pg.Pool({ connectionString: databaseUrl(), max: 2 });

  async rows(where: string, params: unknown[]): Promise<InstanceRow[]> {
    const result = await this.pool.query<InstanceRow>(`select * from runtime_instance where ${where}`, params);
    return result.rows;
  }

  byService(serviceId: string): Promise<InstanceRow[]> {
    return this.rows('service_id = $1 order by runtime_instance_id', [serviceId]);
  }

  async byId(runtimeInstanceId: string): Promise<InstanceRow | undefined> {
    return (await this.rows('runtime_instance_id = $1', [runtimeInstanceId]))[0];
  }

  query(sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
    return this.pool.query(sql, params);
  }

  end(): Promise<void> {
    return this.pool.end();
  }
}

export interface InstanceRow {
  readonly runtime_instance_id: string;
  readonly host_id: string;
  readonly service_id: string;
  readonly env_tag: string | null;
  readonly version: string | null;
  readonly protocol: string | null;
  readonly address: string | null;
  readonly port: number | null;
  readonly tags: Record<string, string>;
  readonly status: string;
  readonly connected_ts: Date;
  readonly last_seen_ts: Date;
  readonly disconnected_ts: Date | null;
  readonly controller_id: string;
  readonly connection_id: string | null;
}

/** Runs `action`, returning every SQL statement the app sent meanwhile (all, and those naming the registry). */
export async function statementsDuring<T>(
  action: () => Promise<T>,
): Promise<{ result: T; all: string[]; registry: string[] }> {
  const all: string[] = [];
  const stop = queryObserver.subscribe((sql) => all.push(sql));
  try {
    const result = await action();
    return { result, all, registry: all.filter((sql) => sql.includes('runtime_instance')) };
  } finally {
    stop();
  }
}
