import type { RuntimeIdentity } from './claims.js';
import type { RuntimeClientEvent } from './events.js';
import type { RuntimeInstance } from './instance-metadata.js';

// The runtime client's options and discovery shapes, apart from the client that uses them.

export interface RuntimeClientOptions extends RuntimeIdentity {
  readonly tokenEndpoint: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Base URL of the api (config server), e.g. `http://localhost:8080`. */
  readonly apiUrl: string;
  /** Base URL of the controller, e.g. `ws://localhost:8081`. */
  readonly controllerUrl: string;
  readonly productId?: string;
  readonly productVersion?: string;
  readonly instance?: RuntimeInstance;
  readonly scope?: string;
  /** Longest wait between reconnect attempts (default 30 s). */
  readonly maxBackoffMs?: number;
  /** Called with what the client does in the background (reconnects, refreshes); silent by default. */
  readonly onEvent?: (event: RuntimeClientEvent) => void;
  readonly fetch?: typeof fetch;
}

export interface LookupResult {
  readonly serviceId: string;
  readonly envTag: string | null;
  readonly nodes: readonly Record<string, unknown>[];
}

export function discoveryParams(serviceId: string, filter: DiscoveryFilter): Record<string, string> {
  const params: Record<string, string> = { serviceId };
  if (filter.envTag !== undefined) params.envTag = filter.envTag;
  if (filter.protocol !== undefined) params.protocol = filter.protocol;
  return params;
}

/** Full jitter over an exponential backoff capped at `capMs`. */
export function backoffDelay(attempt: number, capMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(capMs, 500 * 2 ** Math.min(attempt, 16));
  return Math.floor(ceiling / 2 + random() * (ceiling / 2));
}

export type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };

/** Optional filters of `lookup()` and `subscribe()`; omitted ones match every value. */
export interface DiscoveryFilter {
  readonly envTag?: string;
  readonly protocol?: string;
}

/** A `subscribe()` that lasts across reconnects until `unsubscribe()` or `close()`. */
export interface DiscoverySubscription {
  unsubscribe(): Promise<void>;
}

export interface Watch {
  readonly params: Readonly<Record<string, string>>;
  readonly onChange: (nodes: LookupResult) => void;
  /** The id on the current socket; a reconnect subscribes again and gets a new one. */
  subscriptionId: string | undefined;
}
