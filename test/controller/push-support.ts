import type { RawData } from 'ws';
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
export async function notifyLayer(db: Sql, layer: Layer, version: number | null): Promise<number> {
  await db.query(`select pg_notify('bindery_config', $1)`, [JSON.stringify({ ...layer, version })]);
  return Date.now();
}

export interface Registration {
  readonly serviceId: string;
  readonly envTag?: string;
  readonly productId?: string;
  readonly productVersion?: string;
}

/**
 * A runtime's socket that records every frame it receives after its registrations, with the time each
 * arrived: "receives nothing" is asserted over all of them, not over one method.
 */
export class PushRuntime {
  readonly arrivals: { readonly at: number; readonly frame: RpcResponse }[] = [];
  private recording = false;
  /** Runtimes started by this test file so far. */
  private static started = 0;

  private constructor(readonly client: RpcClient) {
    client.socket.on('message', (data: RawData) => {
      if (!this.recording) return;
      const text = Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
      this.arrivals.push({ at: Date.now(), frame: JSON.parse(text) as RpcResponse });
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

  /** The `config/changed` frames received, with their arrival times. */
  get changes(): { readonly at: number; readonly params: Readonly<Record<string, unknown>> }[] {
    return this.arrivals.flatMap(({ at, frame }) =>
      frame.method === 'config/changed' && frame.params !== undefined ? [{ at, params: frame.params }] : [],
    );
  }

  /** Waits (generously: the latency is asserted from the arrival times, not from this wait) for `count` frames. */
  async waitForChanges(count: number, what: string, timeoutMs = 10_000): Promise<void> {
    await waitFor(() => this.changes.length >= count, what, timeoutMs);
  }

  close(): Promise<unknown> {
    return this.client.close();
  }
}

/** Long enough for a frame that should not come to have come (the coalescing window is 100 ms). */
export const SETTLE_MS = 1500;

export const settle = (ms = SETTLE_MS): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
