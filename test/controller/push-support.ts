import type { RawData } from 'ws';
import { unique } from '../support/api.js';
import { instanceIdOf, RpcClient, waitFor, type RpcResponse } from '../support/controller.js';
import { token } from '../support/tokens.js';

/** A layer's address as the api notifies it (absent parts null). */
export interface Layer {
  readonly host: string;
  readonly serviceId: string | null;
  readonly productId: string | null;
  readonly productVersion: string | null;
  readonly envTag: string | null;
}

export const serviceLayer = (host: string, serviceId: string, envTag: string | null = null): Layer => ({
  host,
  serviceId,
  productId: null,
  productVersion: null,
  envTag,
});

export const productLayer = (
  host: string,
  productId: string,
  productVersion: string,
  envTag: string | null = null,
) => ({
  host,
  serviceId: null,
  productId,
  productVersion,
  envTag,
});

/** Runs statements on the test database (a pg Pool or the registry table helper). */
export interface Sql {
  query(sql: string, params?: unknown[]): Promise<unknown>;
}

/** The notification the api sends in the transaction that changes a layer, sent by hand. */
export async function notifyLayer(db: Sql, layer: Layer, version: number | null): Promise<void> {
  await db.query(`select pg_notify('bindery_config', $1)`, [JSON.stringify({ ...layer, version })]);
}

export interface Registration {
  readonly serviceId: string;
  readonly envTag?: string;
  readonly productId?: string;
  readonly productVersion?: string;
}

/**
 * A runtime's socket that records every frame it receives after its registrations: "receives nothing" is
 * asserted over all of them, not over one method.
 */
export class PushRuntime {
  readonly arrivals: { readonly frame: RpcResponse }[] = [];
  private recording = false;
  /** Runtimes started by this test file so far. */
  private static started = 0;

  private constructor(readonly client: RpcClient) {
    client.socket.on('message', (data: RawData) => {
      if (!this.recording) return;
      const text = Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
      this.arrivals.push({ frame: JSON.parse(text) as RpcResponse });
    });
  }

  /** Connects with a token of `sid` on `host` (and `env` when given) and makes each registration. */
  static async start(
    wsUrl: string,
    host: string,
    registrations: readonly Registration[],
    env?: string,
  ): Promise<PushRuntime> {
    const sid = registrations[0]?.serviceId ?? 'none';
    const client = await RpcClient.connect(wsUrl, {
      token: await token({ sub: 'rt', sid, host, ...(env === undefined ? {} : { env }) }),
    });
    const runtime = new PushRuntime(client);
    // An address of its own: the same identity from two runtimes would move to the later one (DESIGN 8).
    const address = `10.9.${Math.floor(PushRuntime.started / 250)}.${(PushRuntime.started % 250) + 1}`;
    PushRuntime.started += 1;
    let port = 1;
    for (const registration of registrations) {
      instanceIdOf(await client.call('service/register', { ...registration, address, port: port++ }));
    }
    runtime.recording = true;
    return runtime;
  }

  /** The `config/changed` frames received. */
  get changes(): { readonly params: Readonly<Record<string, unknown>> }[] {
    return this.arrivals.flatMap(({ frame }) =>
      frame.method === 'config/changed' && frame.params !== undefined ? [{ params: frame.params }] : [],
    );
  }

  /** Waits for `count` `config/changed` frames in all. */
  async waitForChanges(count: number, what: string, timeoutMs = 10_000): Promise<void> {
    await waitFor(() => this.changes.length >= count, what, timeoutMs);
  }

  /** A ping answered: every frame the controller sent this socket before has arrived (none is recorded for it). */
  roundTrip(): Promise<void> {
    return this.client.roundTrip();
  }

  close(): Promise<unknown> {
    return this.client.close();
  }
}

/**
 * Proves "nothing (more) came" without waiting out a time. A runtime of a service of its own is sent a change
 * of its layer; once that frame arrives, every change the controller was notified of before has been sent:
 * notifications reach it in commit order, and each layer's frame is due COALESCE_MS after its notification,
 * so the timers fire in that order and each sends to all its sockets in one pass. A round trip on each
 * socket then lets anything sent to it arrive.
 */
export class PushMarker {
  private version = 0;

  private constructor(
    private readonly runtime: PushRuntime,
    readonly layer: Layer,
  ) {}

  /** A marker on the controller at `wsUrl`, of `host` (a controller drops other hosts' notifications). */
  static async start(wsUrl: string, host: string): Promise<PushMarker> {
    const serviceId = unique('marker');
    return new PushMarker(await PushRuntime.start(wsUrl, host, [{ serviceId }]), serviceLayer(host, serviceId));
  }

  /** Notifies the marker's layer and waits for its frame, then for a round trip on each of `sockets`. */
  async pass(db: Sql, sockets: readonly { roundTrip(): Promise<void> }[] = []): Promise<void> {
    this.version += 1;
    const version = this.version;
    await notifyLayer(db, this.layer, version);
    // By its version: a resync may also send the marker's layer (the table never held it).
    await waitFor(() => this.runtime.changes.some((c) => c.params.version === version), `the marker ${version}`);
    await Promise.all(sockets.map((socket) => socket.roundTrip()));
  }

  close(): Promise<unknown> {
    return this.runtime.close();
  }
}
