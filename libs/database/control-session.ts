import { Logger, type OnApplicationShutdown } from '@nestjs/common';
import pg from 'pg';
import { outsideRequest } from '#platform';

type Handler = (payload: string) => void;

const MAX_BACKOFF_MS = 2000;
const CONNECT_TIMEOUT_MS = 5000;

/**
 * One dedicated PostgreSQL session per process for LISTEN and for the controller's lease: never queued
 * behind a busy pool (a late renewal must not look like a dead replica), and it reconnects by itself.
 * After a reconnect, `onReconnect` handlers run: notifications sent meanwhile are lost, so listeners re-read.
 */
export class ControlSession implements OnApplicationShutdown {
  private readonly logger = new Logger('ControlSession');
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private readonly channels = new Map<string, Set<Handler>>();
  private readonly reconnectHandlers = new Set<() => void>();
  private everConnected = false;
  private attempt = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly applicationName: string,
  ) {}

  /** Runs `handler` with each notification's payload on `channel` (a fixed identifier, never user input). */
  async listen(channel: string, handler: Handler): Promise<void> {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
    let handlers = this.channels.get(channel);
    if (handlers === undefined) {
      handlers = new Set();
      this.channels.set(channel, handlers);
      handlers.add(handler);
      const client = this.client;
      if (client !== undefined) await client.query(`listen ${channel}`);
      else await this.connect();
      return;
    }
    handlers.add(handler);
  }

  /** Called after the session came back from a lost connection (not on the first connect). */
  onReconnect(handler: () => void): void {
    this.reconnectHandlers.add(handler);
  }

  get connected(): boolean {
    return this.client !== undefined;
  }

  /** Connects now when the session is down (its `onReconnect` handlers run first); fails like `query`. */
  async ensureConnected(): Promise<void> {
    if (this.client === undefined) await this.connect();
  }

  /**
   * A statement on this session; fails at once (no queueing for ever) when it cannot connect. `name`
   * prepares it once per connection (this is a session, never a transaction pooler): for statements sent
   * all the time, whose planning would cost more than running them.
   */
  async query<T>(sql: string, parameters: unknown[] = [], name?: string): Promise<{ rows: T[]; rowCount: number }> {
    const client = this.client ?? (await this.connect());
    const result = await client.query({ text: sql, values: parameters, ...(name === undefined ? {} : { name }) });
    return { rows: result.rows as T[], rowCount: result.rowCount ?? 0 };
  }

  onApplicationShutdown(): Promise<void> {
    return this.close();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private connect(): Promise<pg.Client> {
    if (this.closed) return Promise.reject(new Error('the control session is closed'));
    // Outside the request that happens to connect first: the client's events and retries are background work.
    this.connecting ??= outsideRequest(() => this.open()).finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async open(): Promise<pg.Client> {
    const client = new pg.Client({
      connectionString: this.url,
      application_name: this.applicationName,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      // A direct session (never a transaction pooler): its start-up packet carries the zone (DESIGN 15).
      options: '-c TimeZone=UTC',
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => {
      for (const handler of this.channels.get(message.channel) ?? []) handler(message.payload ?? '');
    });
    try {
      await client.connect();
      for (const channel of this.channels.keys()) await client.query(`listen ${channel}`);
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      this.scheduleRetry();
      throw error;
    }
    this.client = client;
    this.attempt = 0;
    const reconnected = this.everConnected;
    this.everConnected = true;
    if (reconnected) {
      this.logger.log('control session reconnected');
      for (const handler of this.reconnectHandlers) handler();
    }
    return client;
  }

  private lost(client: pg.Client, error?: Error): void {
    if (this.client !== client) return;
    this.client = undefined;
    if (this.closed) return;
    this.logger.warn({ reason: error?.message ?? 'connection ended' }, 'control session lost; reconnecting');
    void client.end().catch(() => undefined);
    this.scheduleRetry();
  }

  /** Listeners need the session back without anyone asking for it: retry with a capped backoff. */
  private scheduleRetry(): void {
    if (this.closed || this.retryTimer !== undefined || this.channels.size === 0) return;
    const delay = Math.min(MAX_BACKOFF_MS, 100 * 2 ** this.attempt++);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.client === undefined) this.connect().catch(() => undefined);
    }, delay);
    this.retryTimer.unref();
  }
}
