import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { ControlSession, REGISTRY_CHANNEL, type Protocol } from '#database';
import { newId } from '#platform';
import type { RegistryConnection } from '../sessions/connection.js';
import type { LookupParams } from '../dto/lookup.params.js';
import { paramRefused } from '../registry.errors.js';
import { RegistryService } from '../registry.service.js';
import type { ChangedParams, LookupResult, SubscribeResult, UnsubscribeResult } from '../runtime-instance.view.js';

/** Subscriptions one socket may hold (DESIGN 8). */
export const MAX_SUBSCRIPTIONS_PER_SOCKET = 100;

/** How long a node-set read that failed (database away) waits before it is tried again. */
const RETRY_MS = 1000;

/** Sends one `discovery/changed` notification to the subscriber's socket. */
export type Notify = (params: ChangedParams) => void;

interface Subscription {
  readonly id: string;
  readonly connection: RegistryConnection;
  readonly filter: Readonly<Pick<LookupParams, 'serviceId' | 'envTag' | 'protocol'>>;
  readonly key: string;
  readonly notify: Notify;
  /** The node set last sent (the subscribe answer, then each notification), serialized. */
  last: string | undefined;
  /** A change arrived while the subscribe answer was being read: read again once it is sent. */
  missed: boolean;
}

interface Refresh {
  dirty: boolean;
}

/**
 * `discovery/subscribe` (DESIGN 8 and 8.1). Every change of a runtime instance, made by any replica,
 * arrives as a PostgreSQL notification naming its host and service; subscriptions with the same filter
 * share one read of the node set, and each is told only when its set differs from what it last got.
 * The payload is only a hint: node sets are always read from the table, so a lost or coalesced
 * notification costs nothing, and after the session reconnects every filter is read again.
 */
@Injectable()
export class DiscoveryService implements OnModuleInit {
  private readonly logger = new Logger('Discovery');
  private readonly byId = new Map<string, Subscription>();
  /** Subscriptions by filter key; filter keys by service. */
  private readonly byKey = new Map<string, Set<Subscription>>();
  private readonly keysByService = new Map<string, Set<string>>();
  /** Filter keys being read now; `dirty` asks for one more read when the current one ends. */
  private readonly refreshing = new Map<string, Refresh>();

  constructor(
    private readonly registry: RegistryService,
    private readonly session: ControlSession,
  ) {}

  async onModuleInit(): Promise<void> {
    this.session.onReconnect(() => {
      for (const key of this.byKey.keys()) this.refresh(key);
    });
    await this.session.listen(REGISTRY_CHANNEL, (payload) => this.changed(payload));
  }

  get size(): number {
    return this.byId.size;
  }

  async subscribe(connection: RegistryConnection, params: LookupParams, notify: Notify): Promise<SubscribeResult> {
    if (connection.subscriptions.size >= MAX_SUBSCRIPTIONS_PER_SOCKET) {
      throw paramRefused('serviceId', `at most ${MAX_SUBSCRIPTIONS_PER_SOCKET} subscriptions per connection`);
    }
    const filter = { serviceId: params.serviceId, envTag: params.envTag, protocol: params.protocol };
    const subscription: Subscription = {
      id: newId(),
      connection,
      filter,
      key: keyOf(filter),
      notify,
      last: undefined,
      missed: false,
    };
    // Registered before the first read, so a change during that read is not lost (it sets `missed`).
    this.add(subscription);
    let result: LookupResult;
    try {
      result = await this.registry.lookup(filter);
    } catch (error) {
      this.remove(subscription);
      throw error;
    }
    if (connection.closed) {
      this.remove(subscription);
    } else {
      subscription.last = JSON.stringify(result);
      // The answer is sent when this resolves; a change seen meanwhile is read again right after it.
      if (subscription.missed) setImmediate(() => this.refresh(subscription.key));
    }
    return { subscriptionId: subscription.id, ...result };
  }

  unsubscribe(connection: RegistryConnection, subscriptionId: string): UnsubscribeResult {
    const subscription = this.byId.get(subscriptionId);
    if (subscription === undefined || subscription.connection !== connection) {
      throw paramRefused('subscriptionId', 'unknown subscriptionId');
    }
    this.remove(subscription);
    return { subscriptionId, status: 'unsubscribed' };
  }

  /** The socket closed: its subscriptions end. */
  closed(connection: RegistryConnection): void {
    for (const id of connection.subscriptions) {
      const subscription = this.byId.get(id);
      if (subscription !== undefined) this.remove(subscription);
    }
  }

  private changed(payload: string): void {
    let change: { hostId?: unknown; serviceId?: unknown };
    try {
      change = JSON.parse(payload) as typeof change;
    } catch {
      return;
    }
    if (change.hostId !== this.registry.hostId || typeof change.serviceId !== 'string') return;
    for (const key of this.keysByService.get(change.serviceId) ?? []) this.refresh(key);
  }

  /** Reads the node set of one filter and tells each of its subscriptions whose set changed. */
  private refresh(key: string): void {
    const running = this.refreshing.get(key);
    if (running !== undefined) {
      running.dirty = true;
      return;
    }
    const state: Refresh = { dirty: false };
    this.refreshing.set(key, state);
    void this.read(key, state).finally(() => this.refreshing.delete(key));
  }

  private async read(key: string, state: Refresh): Promise<void> {
    do {
      state.dirty = false;
      const subscriptions = this.byKey.get(key);
      const first = subscriptions?.values().next().value;
      if (subscriptions === undefined || first === undefined) return;
      let result: LookupResult;
      try {
        result = await this.registry.lookup(first.filter);
      } catch (error) {
        this.logger.warn({ err: error }, 'could not read a node set; trying again');
        setTimeout(() => this.refresh(key), RETRY_MS).unref();
        return;
      }
      const serialized = JSON.stringify(result);
      for (const subscription of subscriptions) {
        if (subscription.last === undefined) {
          subscription.missed = true;
        } else if (subscription.last !== serialized) {
          subscription.last = serialized;
          subscription.notify({ subscriptionId: subscription.id, ...result });
        }
      }
    } while (state.dirty);
  }

  private add(subscription: Subscription): void {
    this.byId.set(subscription.id, subscription);
    subscription.connection.subscriptions.add(subscription.id);
    let subscriptions = this.byKey.get(subscription.key);
    if (subscriptions === undefined) {
      subscriptions = new Set();
      this.byKey.set(subscription.key, subscriptions);
      let keys = this.keysByService.get(subscription.filter.serviceId);
      if (keys === undefined) {
        keys = new Set();
        this.keysByService.set(subscription.filter.serviceId, keys);
      }
      keys.add(subscription.key);
    }
    subscriptions.add(subscription);
  }

  private remove(subscription: Subscription): void {
    this.byId.delete(subscription.id);
    subscription.connection.subscriptions.delete(subscription.id);
    const subscriptions = this.byKey.get(subscription.key);
    if (subscriptions === undefined) return;
    subscriptions.delete(subscription);
    if (subscriptions.size > 0) return;
    this.byKey.delete(subscription.key);
    const keys = this.keysByService.get(subscription.filter.serviceId);
    keys?.delete(subscription.key);
    if (keys?.size === 0) this.keysByService.delete(subscription.filter.serviceId);
  }
}

function keyOf(filter: { serviceId: string; envTag?: string | undefined; protocol?: Protocol | undefined }): string {
  return JSON.stringify([filter.serviceId, filter.envTag ?? null, filter.protocol ?? null]);
}
