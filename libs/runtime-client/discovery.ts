import {
  discoveryParams,
  type DiscoveryFilter,
  type DiscoverySubscription,
  type LookupResult,
  type Watch,
} from './client-types.js';

/** How the client sends one JSON-RPC call on its current controller socket. */
export type Call = (method: string, params: Record<string, unknown>) => Promise<unknown>;

/** A runtime's discovery (DESIGN 8): lookups, and subscriptions that outlive its sockets. */
export class Discovery {
  private readonly watches = new Set<Watch>();

  constructor(private readonly call: Call) {}

  lookup(serviceId: string, filter: DiscoveryFilter = {}): Promise<LookupResult> {
    return this.call('discovery/lookup', discoveryParams(serviceId, filter)) as Promise<LookupResult>;
  }

  /**
   * `discovery/subscribe`: `onChange` gets the current node set now and the whole new set on every change,
   * on any controller replica. After a reconnect the client subscribes again and `onChange` gets the set as
   * it is then, so nothing that happened while disconnected is missed.
   */
  async subscribe(
    serviceId: string,
    onChange: (nodes: LookupResult) => void,
    filter: DiscoveryFilter = {},
  ): Promise<DiscoverySubscription> {
    const watch: Watch = { params: discoveryParams(serviceId, filter), onChange, subscriptionId: undefined };
    this.watches.add(watch);
    try {
      await this.watch(watch);
    } catch (error) {
      this.watches.delete(watch);
      throw error;
    }
    return {
      unsubscribe: async () => {
        this.watches.delete(watch);
        const subscriptionId = watch.subscriptionId;
        watch.subscriptionId = undefined;
        if (subscriptionId !== undefined) {
          await this.call('discovery/unsubscribe', { subscriptionId }).catch(() => undefined);
        }
      },
    };
  }

  /** Subscriptions belong to a socket: a new socket needs them again. */
  async resubscribe(onError: (error: unknown) => void): Promise<void> {
    for (const watch of this.watches) await this.watch(watch).catch(onError);
  }

  /** The socket is gone, and with it every subscription id. */
  detach(): void {
    for (const watch of this.watches) watch.subscriptionId = undefined;
  }

  /** A `discovery/changed` notification: the new set, to the subscription it names. */
  changed(params: unknown): void {
    if (typeof params !== 'object' || params === null) return;
    const { subscriptionId, ...result } = params as LookupResult & { subscriptionId?: unknown };
    for (const watch of this.watches) {
      if (watch.subscriptionId !== undefined && watch.subscriptionId === subscriptionId) watch.onChange(result);
    }
  }

  private async watch(watch: Watch): Promise<void> {
    const { subscriptionId, ...result } = (await this.call('discovery/subscribe', watch.params)) as LookupResult & {
      subscriptionId: string;
    };
    watch.subscriptionId = subscriptionId;
    watch.onChange(result);
  }
}
