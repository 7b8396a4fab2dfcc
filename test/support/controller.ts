import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import pg from 'pg';
import WebSocket, { type RawData } from 'ws';
import { migrate, queryObserver } from '#database';
import { createControllerApp } from '../../apps/controller/app.js';
import { PendingWrites } from '../../apps/controller/registry/sessions/pending-writes.js';
import { RegistryGateway } from '../../apps/controller/registry/registry.gateway.js';
import { RegistryMetrics } from '../../apps/controller/registry/registry-metrics.js';
import { testSettings, unique } from './api.js';
import { LogCapture } from './log-lines.js';
import { recordRoutes, type RouteRecord } from './route-table.js';
import { waitFor, withTimeout } from './wait.js';

export const WS_PATH = '/ws/microservice';
export { WAIT_MS, waitFor } from './wait.js';

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

/** The upgrade was answered with an HTTP status instead of 101. */
export class UpgradeRefused extends Error {
  constructor(
    readonly status: number,
    readonly headers: IncomingHttpHeaders,
  ) {
    super(`upgrade refused with HTTP ${status}`);
  }
}

export interface Closed {
  readonly code: number;
  readonly reason: string;
}

type Fields = Readonly<Record<string, unknown>>;

export interface RpcResponse {
  readonly jsonrpc: string;
  readonly id: string | number | null;
  readonly result?: Fields;
  readonly error?: { readonly code: number; readonly message: string; readonly data?: Fields };
  /** Set on a notification (no id), such as `discovery/changed`. */
  readonly method?: string;
  readonly params?: Fields;
}

/** The `discovery/changed` notifications `client` has received for `subscriptionId`, oldest first. */
export function changesOf(client: RpcClient, subscriptionId: string): Fields[] {
  return (client.received as RpcResponse[]).flatMap((frame) =>
    frame.method === 'discovery/changed' && frame.params?.subscriptionId === subscriptionId ? [frame.params] : [],
  );
}

/** The `runtimeInstanceId` of a successful `service/register` answer. */
export function instanceIdOf(response: RpcResponse): string {
  const id = response.result?.runtimeInstanceId;
  if (typeof id !== 'string') throw new Error(`not a registration result: ${JSON.stringify(response)}`);
  return id;
}

export interface ConnectOptions {
  /** Sent as `Authorization: Bearer <token>`. */
  readonly token?: string;
  readonly headers?: Record<string, string>;
  /** False: the client never answers the server's pings (a silent peer). */
  readonly autoPong?: boolean;
}

/** A real WebSocket client speaking JSON-RPC, recording every frame it receives. */
export class RpcClient {
  private static readonly all = new Set<RpcClient>();
  readonly received: unknown[] = [];
  readonly closed: Promise<Closed>;
  private nextId = 1;
  private readonly listeners = new Set<() => void>();

  private constructor(
    readonly socket: WebSocket,
    readonly url: string,
  ) {
    RpcClient.all.add(this);
    this.closed = new Promise((resolve) => {
      socket.once('close', (code: number, reason: Buffer) => {
        RpcClient.all.delete(this);
        resolve({ code, reason: reason.toString('utf8') });
      });
    });
    socket.on('message', (data: RawData) => {
      const text = Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
      this.received.push(JSON.parse(text));
      for (const listener of this.listeners) listener();
    });
  }

  static connect(url: string, options: ConnectOptions = {}): Promise<RpcClient> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    const socket = new WebSocket(url, { headers, autoPong: options.autoPong ?? true });
    const opened = new Promise<RpcClient>((resolve, reject) => {
      socket.once('open', () => resolve(new RpcClient(socket, url)));
      socket.once('unexpected-response', (_request, response) => {
        response.resume();
        reject(new UpgradeRefused(response.statusCode ?? 0, response.headers));
        socket.terminate();
      });
      // After a refusal, ws reports the aborted handshake as an error; the refusal above already settled.
      socket.on('error', reject);
    });
    return withTimeout(opened, `the upgrade to ${url}`);
  }

  /** Clients of `url` whose socket is open and not closing (as this side sees it). */
  static openTo(url: string): number {
    let open = 0;
    for (const client of RpcClient.all)
      if (client.url === url && client.socket.readyState === WebSocket.OPEN) open += 1;
    return open;
  }

  /** Sends one text frame exactly as given. */
  sendRaw(data: string | Buffer, binary = false): void {
    this.socket.send(data, { binary });
  }

  notify(method: string, params?: unknown): void {
    this.sendRaw(JSON.stringify({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) }));
  }

  /** Sends a request and waits for the response carrying its id. */
  async call(method: string, params?: unknown, id: string | number = this.nextId++): Promise<RpcResponse> {
    this.sendRaw(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }));
    return this.response((r) => r.id === id, `the response to ${method} (id ${id})`);
  }

  /** Waits for a received frame matching `match` (frames already received count). */
  response(match: (response: RpcResponse) => boolean, what = 'a response'): Promise<RpcResponse> {
    const find = (): RpcResponse | undefined =>
      (this.received as RpcResponse[]).find((r) => typeof r === 'object' && r !== null && match(r));
    const found = find();
    if (found !== undefined) return Promise.resolve(found);
    return withTimeout(
      new Promise<RpcResponse>((resolve) => {
        const listener = (): void => {
          const hit = find();
          if (hit === undefined) return;
          this.listeners.delete(listener);
          resolve(hit);
        };
        this.listeners.add(listener);
      }),
      what,
    );
  }

  /** The next frame after those already received. */
  next(what = 'the next frame'): Promise<RpcResponse> {
    const index = this.received.length;
    return this.response((r) => this.received.indexOf(r) >= index, what);
  }

  /**
   * A ping the server answers: every frame it sent on this socket before it read the ping has arrived by
   * then, so "nothing came" is certain for whatever the server did before. Fails if the socket closes first.
   */
  roundTrip(what = 'the answer to a ping'): Promise<void> {
    const payload = Buffer.from(`rt-${this.nextId++}`);
    const answered = new Promise<void>((resolve, reject) => {
      const onPong = (data: Buffer): void => {
        if (!data.equals(payload)) return;
        this.socket.off('pong', onPong);
        resolve();
      };
      this.socket.on('pong', onPong);
      void this.closed.then((closed) => {
        this.socket.off('pong', onPong);
        reject(new Error(`the socket closed (${closed.code} ${closed.reason}) before ${what}`));
      });
      this.socket.ping(payload);
    });
    return withTimeout(answered, what);
  }

  waitClosed(what = 'the socket to close'): Promise<Closed> {
    return withTimeout(this.closed, what);
  }

  async close(): Promise<Closed> {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.close(1000, 'done');
    return this.waitClosed();
  }
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
