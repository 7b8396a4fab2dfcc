import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ConfigLayerRepository, ControlSession, type KeyValue, type LayerAddress } from '#database';
import { SETTINGS, type Settings } from '#platform';
import { ChangeNotifier } from '../discovery/change-notifier.js';
import { Connections } from '../sessions/connection.js';

/** The channel the api notifies in the transaction that changes a layer (DESIGN 14). */
export const CONFIG_CHANNEL = 'bindery_config';

/** Changes of one layer within this window after the first go out as one frame with the latest version. */
export const COALESCE_MS = 100;

/** Layers read per statement when the versions of this host are read again. */
const PAGE = 1000;

/** How long a read of the layer versions that failed (database away) waits before it is tried again. */
const RETRY_MS = 1000;

/** `config/changed` params (DESIGN 14): the registration it concerns, the layer that changed and its version. */
export interface ConfigChangedParams {
  readonly serviceId: string;
  readonly envTag: string | null;
  readonly layer: LayerAddress;
  /** The layer's new version; null when the layer was found gone after a reconnect of the listening session. */
  readonly version: number | null;
}

interface Change {
  readonly layer: LayerAddress;
  readonly version: number | null;
}

const keyOf = (layer: LayerAddress): string =>
  JSON.stringify([layer.host, layer.serviceId, layer.productId, layer.productVersion, layer.envTag]);

const part = (value: unknown): string | null | undefined =>
  value === null || value === undefined ? null : typeof value === 'string' ? value : undefined;

/** The api's payload `{ host, serviceId, productId, productVersion, envTag, version }`, or undefined when malformed. */
export function parseConfigChange(payload: string): Change | undefined {
  let raw: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(payload);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
    raw = parsed as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const [serviceId, productId, productVersion, envTag] = [
    part(raw.serviceId),
    part(raw.productId),
    part(raw.productVersion),
    part(raw.envTag),
  ];
  const version = raw.version ?? null;
  if (typeof raw.host !== 'string' || serviceId === undefined || productId === undefined) return undefined;
  if (productVersion === undefined || envTag === undefined) return undefined;
  if (version !== null && !(typeof version === 'number' && Number.isSafeInteger(version) && version >= 0)) {
    return undefined;
  }
  return { layer: { host: raw.host, serviceId, productId, productVersion, envTag }, version };
}

/**
 * Config push (DESIGN 14). Every api process notifies `bindery_config` in the transaction that changes a
 * layer; each controller replica sends `config/changed` to exactly its sockets whose registrations that
 * layer feeds, one frame per socket per change (coalesced per layer over COALESCE_MS), and nothing to others.
 * Notifications sent while the listening session was down are lost, so after it reconnects the versions
 * of this host's layers are read again and every layer whose version differs from the last one seen is
 * pushed as if notified: a change made during a database failover still reaches its runtimes.
 */
@Injectable()
export class ConfigPush implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('ConfigPush');
  /** Layers with a frame due at the end of their coalescing window, and the latest change seen. */
  private readonly pending = new Map<string, { change: Change; timer: NodeJS.Timeout }>();
  /** The version of each layer of this host as last seen (read or notified): what a resync compares against. */
  private known = new Map<string, Change>();
  /** Changes notified while a read of the versions runs: newer than what that read may return. */
  private notifiedDuringRead: Map<string, Change> | undefined;
  private readAgain = false;

  constructor(
    private readonly connections: Connections,
    private readonly notifier: ChangeNotifier,
    private readonly layers: ConfigLayerRepository,
    private readonly session: ControlSession,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  async onModuleInit(): Promise<void> {
    this.session.onReconnect(() => void this.resync(true));
    await this.session.listen(CONFIG_CHANNEL, (payload) => this.changed(payload));
    // Before the server listens no socket can have missed anything: this read is only the baseline.
    await this.resync(false);
  }

  onModuleDestroy(): void {
    for (const { timer } of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
  }

  private changed(payload: string): void {
    const change = parseConfigChange(payload);
    if (change === undefined) {
      this.logger.warn({ payload: payload.slice(0, 200) }, `ignoring a malformed ${CONFIG_CHANNEL} notification`);
      return;
    }
    if (change.layer.host !== this.settings.controllerHostId) return;
    const key = keyOf(change.layer);
    // A resync already pushed this version (its notification was still on the way).
    if (change.version !== null && this.known.get(key)?.version === change.version) return;
    this.remember(key, change);
    this.notifiedDuringRead?.set(key, change);
    this.schedule(key, change);
  }

  private remember(key: string, change: Change): void {
    if (change.version === null) this.known.delete(key);
    else this.known.set(key, change);
  }

  private schedule(key: string, change: Change): void {
    const due = this.pending.get(key);
    if (due !== undefined) {
      due.change = change;
      return;
    }
    const timer = setTimeout(() => {
      const latest = this.pending.get(key)?.change ?? change;
      this.pending.delete(key);
      this.deliver(latest);
    }, COALESCE_MS);
    timer.unref();
    this.pending.set(key, { change, timer });
  }

  /** One frame to each open socket that holds a registration the layer feeds, found through the index. */
  private deliver({ layer, version }: Change): void {
    let sockets = 0;
    for (const [connection, binding] of this.connections.pushTargets.targets(layer)) {
      const client = this.connections.socketOf(connection);
      if (client === undefined || connection.closed) continue;
      const params: ConfigChangedParams = { serviceId: binding.serviceId, envTag: binding.envTag, layer, version };
      if (this.notifier.send(client, 'config/changed', params)) sockets += 1;
    }
    this.logger.debug({ layer, version, sockets }, 'config/changed sent');
  }

  /**
   * Reads the versions of this host's layers; with `push`, each layer whose version differs from the last
   * one seen (changed, new or gone) is pushed. Runs once at a time; a call meanwhile reads once more after.
   */
  private async resync(push: boolean): Promise<void> {
    if (this.notifiedDuringRead !== undefined) {
      this.readAgain ||= push;
      return;
    }
    const notified = new Map<string, Change>();
    this.notifiedDuringRead = notified;
    let fresh: Map<string, Change>;
    try {
      fresh = await this.readVersions();
    } catch (error) {
      this.notifiedDuringRead = undefined;
      this.logger.warn({ err: error }, 'could not read the config layer versions; trying again');
      setTimeout(() => void this.resync(push), RETRY_MS).unref();
      return;
    }
    this.notifiedDuringRead = undefined;
    // A notification handled during the read is at least as new as what the read saw (and was pushed).
    for (const [key, change] of notified) {
      if (change.version === null) fresh.delete(key);
      else fresh.set(key, change);
    }
    if (push) {
      let layers = 0;
      for (const [key, change] of fresh) {
        if (this.known.get(key)?.version === change.version) continue;
        this.schedule(key, change);
        layers += 1;
      }
      for (const [key, { layer }] of this.known) {
        if (fresh.has(key)) continue;
        this.schedule(key, { layer, version: null });
        layers += 1;
      }
      this.logger.log({ layers }, 'config layers read again after the listening session reconnected');
    }
    this.known = fresh;
    if (this.readAgain) {
      this.readAgain = false;
      await this.resync(true);
    }
  }

  private async readVersions(): Promise<Map<string, Change>> {
    const versions = new Map<string, Change>();
    const host = this.settings.controllerHostId;
    // Keyset pages: a layer created meanwhile never shifts another out of the walk.
    let after: KeyValue[] | undefined;
    do {
      const page = await this.layers.page(host, { offset: 0, after, limit: PAGE, withTotal: false });
      for (const { address, version } of page.rows) versions.set(keyOf(address), { layer: address, version });
      after = page.next;
    } while (after !== undefined);
    return versions;
  }
}
