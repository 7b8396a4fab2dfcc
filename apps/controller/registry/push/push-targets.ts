import type { LayerAddress } from '#database';

/** What a registration says about the config it reads: the layers that feed it (DESIGN 14 push). */
export interface ConfigBinding {
  readonly serviceId: string;
  readonly envTag: string | null;
  readonly productId: string | null;
  readonly productVersion: string | null;
}

/**
 * Whether `layer` feeds the merged config of a registration (DESIGN 7 and 14): its service's layers or its
 * product's, for all environments or for its own. A registration without envTag reads only all-env layers.
 */
export function feeds(layer: LayerAddress, binding: ConfigBinding): boolean {
  const owner =
    (layer.serviceId !== null && layer.serviceId === binding.serviceId) ||
    (layer.productId !== null &&
      layer.productId === binding.productId &&
      layer.productVersion === binding.productVersion);
  return owner && (layer.envTag === null || layer.envTag === binding.envTag);
}

interface Held<S> {
  readonly owner: S;
  readonly binding: ConfigBinding;
}

const productKey = (productId: string, productVersion: string | null): string =>
  JSON.stringify([productId, productVersion]);

/** The index keys a binding is found under: its service, and its product when it names one. */
function keysOf(binding: ConfigBinding): { readonly service: string; readonly product: string | undefined } {
  const product = binding.productId === null ? undefined : productKey(binding.productId, binding.productVersion);
  return { service: binding.serviceId, product };
}

/**
 * The registrations one controller process holds, by the layers that may feed them (DESIGN 14 push), so a
 * change finds its sockets through its service or its product without scanning every socket. Each
 * registration has exactly one owner, the socket that registered it last (DESIGN 8 Ownership). All of them
 * are of the controller's host (CONTROLLER_HOST_ID): a change of another host is dropped before any lookup.
 * `S` is the owner's state (a `RegistryConnection`); generic so the index is tested on its own.
 */
export class PushTargets<S> {
  private readonly held = new Map<string, Held<S>>();
  private readonly byService = new Map<string, Set<string>>();
  private readonly byProduct = new Map<string, Set<string>>();

  /** Registrations held. */
  get size(): number {
    return this.held.size;
  }

  /** The socket that holds registration `id`, if one of this process does. */
  ownerOf(id: string): S | undefined {
    return this.held.get(id)?.owner;
  }

  /**
   * `owner` registered `id` (again) with `binding`: it alone holds it from now on. Answers the socket that
   * held it before when the registration moved from another one.
   */
  hold(owner: S, id: string, binding: ConfigBinding): S | undefined {
    const before = this.held.get(id);
    if (before !== undefined) this.unindex(id, before.binding);
    this.held.set(id, { owner, binding });
    this.index(id, binding);
    return before !== undefined && before.owner !== owner ? before.owner : undefined;
  }

  /** `owner` gave up `id` (deregistered, or its socket closed); a registration another socket holds now stays. */
  release(owner: S, id: string): boolean {
    const held = this.held.get(id);
    if (held === undefined || held.owner !== owner) return false;
    this.held.delete(id);
    this.unindex(id, held.binding);
    return true;
  }

  /** Each socket one of whose registrations `layer` feeds, with the first such registration's binding. */
  targets(layer: LayerAddress): Map<S, ConfigBinding> {
    const found = new Map<S, ConfigBinding>();
    const visit = (ids: Set<string> | undefined): void => {
      for (const id of ids ?? []) {
        const held = this.held.get(id);
        if (held === undefined || found.has(held.owner) || !feeds(layer, held.binding)) continue;
        found.set(held.owner, held.binding);
      }
    };
    if (layer.serviceId !== null) visit(this.byService.get(layer.serviceId));
    if (layer.productId !== null) visit(this.byProduct.get(productKey(layer.productId, layer.productVersion)));
    return found;
  }

  private index(id: string, binding: ConfigBinding): void {
    const { service, product } = keysOf(binding);
    add(this.byService, service, id);
    if (product !== undefined) add(this.byProduct, product, id);
  }

  private unindex(id: string, binding: ConfigBinding): void {
    const { service, product } = keysOf(binding);
    remove(this.byService, service, id);
    if (product !== undefined) remove(this.byProduct, product, id);
  }
}

function add(index: Map<string, Set<string>>, key: string, id: string): void {
  const ids = index.get(key);
  if (ids === undefined) index.set(key, new Set([id]));
  else ids.add(id);
}

/** Drops `id`, and the key once no registration is left under it, so the index never outgrows what is held. */
function remove(index: Map<string, Set<string>>, key: string, id: string): void {
  const ids = index.get(key);
  if (ids === undefined) return;
  ids.delete(id);
  if (ids.size === 0) index.delete(key);
}
