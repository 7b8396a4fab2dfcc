import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import type { RuntimeIdentity } from './claims.js';
import { configDiff, type ConfigChange, type ConfigChangeListener, type ConfigLayerAddress } from './config-change.js';
import { causeOf, type RuntimeClientActivity, type RuntimeClientEvent } from './events.js';
import { InstanceMetadata, type MetadataUpdate, type RuntimeInstance } from './instance-metadata.js';
import { TokenSource } from './token-source.js';

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

export type { RuntimeClientEvent } from './events.js';
export type { MetadataUpdate, RuntimeInstance } from './instance-metadata.js';
export { configDiff, type ConfigChange, type ConfigChangeListener, type ConfigLayerAddress } from './config-change.js';

export interface LookupResult {
  readonly serviceId: string;
  readonly envTag: string | null;
  readonly nodes: readonly Record<string, unknown>[];
}

/** A config-server or controller answer that was not a success. */
export class RuntimeRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'RuntimeRequestError';
  }
}

interface Cached {
  readonly etag: string;
  readonly body: unknown;
}

function discoveryParams(serviceId: string, filter: DiscoveryFilter): Record<string, string> {
  const params: Record<string, string> = { serviceId };
  if (filter.envTag !== undefined) params.envTag = filter.envTag;
  if (filter.protocol !== undefined) params.protocol = filter.protocol;
  return params;
}

/** A plain file name: no path separator, no `..`, no control characters (DESIGN 11). */
export function isPlainFileName(name: string): boolean {
  // eslint-disable-next-line no-control-regex
  return name !== '' && name !== '.' && !name.includes('..') && !/[/\\\u0000-\u001f\u007f]/.test(name);
}

/** Full jitter over an exponential backoff capped at `capMs`. */
export function backoffDelay(attempt: number, capMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(capMs, 500 * 2 ** Math.min(attempt, 16));
  return Math.floor(ceiling / 2 + random() * (ceiling / 2));
}

type Pending = { resolve: (value: unknown) => void; reject: (error: Error) => void };

/** Optional filters of `lookup()` and `subscribe()`; omitted ones match every value. */
export interface DiscoveryFilter {
  readonly envTag?: string;
  readonly protocol?: string;
}

/** A `subscribe()` that lasts across reconnects until `unsubscribe()` or `close()`. */
export interface DiscoverySubscription {
  unsubscribe(): Promise<void>;
}

type ConfigTrigger = ConfigChange['cause'];

interface Watch {
  readonly params: Readonly<Record<string, string>>;
  readonly onChange: (nodes: LookupResult) => void;
  /** The id on the current socket; a reconnect subscribes again and gets a new one. */
  subscriptionId: string | undefined;
}

/**
 * What a runtime service imports to bootstrap itself (DESIGN 11): a token of the right profile first,
 * then its configuration, then its registration with the controller, kept alive until `close()`.
 */
export class RuntimeClient {
  private readonly tokens: TokenSource;
  private readonly cache = new Map<string, Cached>();
  private readonly fetchImpl: typeof fetch;
  private readonly metadata: InstanceMetadata;
  private socket: WebSocket | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private runtimeInstanceId: string | undefined;
  private closed = false;
  private attempt = 0;
  /** When the last connection was lost (epoch ms); undefined while connected or before the first. */
  private lostAt: number | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly watches = new Set<Watch>();
  private readonly configListeners = new Set<ConfigChangeListener>();
  /** The config the listeners last saw (their baseline); undefined until `onConfigChange` read it. */
  private configSeen: Record<string, unknown> | undefined;
  /** A re-read is running; `configAgain` holds the latest trigger that arrived meanwhile. */
  private configReading = false;
  private configAgain: ConfigTrigger | undefined;

  private constructor(private readonly options: RuntimeClientOptions) {
    this.fetchImpl = options.fetch ?? fetch;
    this.metadata = new InstanceMetadata(options.instance);
    this.tokens = new TokenSource({
      tokenEndpoint: options.tokenEndpoint,
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      identity: options,
      scope: options.scope,
      fetch: this.fetchImpl,
    });
  }

  /** Token setup: fails with RuntimeTokenError (naming the claim) before any other request is made. */
  static async create(options: RuntimeClientOptions): Promise<RuntimeClient> {
    const client = new RuntimeClient(options);
    await client.tokens.token();
    return client;
  }

  /** The instance id the controller gave the last registration. */
  get instanceId(): string | undefined {
    return this.runtimeInstanceId;
  }

  config(): Promise<Record<string, unknown>> {
    return this.read('configs') as Promise<Record<string, unknown>>;
  }

  certs(): Promise<Record<string, string>> {
    return this.read('certs') as Promise<Record<string, string>>;
  }

  files(): Promise<Record<string, string>> {
    return this.read('files') as Promise<Record<string, string>>;
  }

  /**
   * `callback` gets the new config and the keys that changed each time it changes (DESIGN 14): on every
   * `config/changed` from the controller, and after every reconnect (a change made while disconnected is
   * noticed then), the client reads its config again with its ETag; an unchanged config calls nothing.
   * Resolves once the current config is read as the baseline. Returns a function that removes `callback`.
   */
  async onConfigChange(callback: ConfigChangeListener): Promise<() => void> {
    this.configListeners.add(callback);
    if (this.configSeen === undefined) {
      try {
        this.configSeen = await this.config();
      } catch (error) {
        this.configListeners.delete(callback);
        throw error;
      }
    }
    return () => this.configListeners.delete(callback);
  }

  /** Reads the config again and tells the listeners what changed; one read at a time, the latest trigger last. */
  private reloadConfig(cause: ConfigTrigger): void {
    if (this.configListeners.size === 0 || this.configSeen === undefined) return;
    if (this.configReading) {
      this.configAgain = cause;
      return;
    }
    this.configReading = true;
    void this.config()
      .then((values) => {
        const before = this.configSeen ?? {};
        this.configSeen = values;
        const diff = configDiff(before, values);
        if (diff.added.length + diff.changed.length + diff.removed.length === 0) return;
        for (const listener of this.configListeners) listener({ values, ...diff, cause });
      })
      .catch((error: unknown) => this.fail('config re-read', error))
      .finally(() => {
        this.configReading = false;
        const again = this.configAgain;
        this.configAgain = undefined;
        if (again !== undefined) this.reloadConfig(again);
      });
  }

  /** Writes the config server's files (or certs) into `dir`; any name that is not plain is refused first. */
  async writeFiles(dir: string, kind: 'files' | 'certs' = 'files'): Promise<string[]> {
    const files = kind === 'files' ? await this.files() : await this.certs();
    const names = Object.keys(files);
    const bad = names.find((name) => !isPlainFileName(name));
    if (bad !== undefined)
      throw new RuntimeRequestError(0, `refusing to write file ${JSON.stringify(bad)}: not a plain name`);
    await mkdir(dir, { recursive: true });
    for (const name of names) await writeFile(join(dir, name), Buffer.from(files[name] ?? '', 'base64'));
    return names;
  }

  private async read(kind: 'configs' | 'certs' | 'files'): Promise<unknown> {
    const { host, serviceId, envTag, productId, productVersion } = this.options;
    const query = new URLSearchParams({ host, serviceId });
    if (envTag !== undefined && envTag !== '') query.set('envTag', envTag);
    if (productId !== undefined) query.set('productId', productId);
    if (productVersion !== undefined) query.set('productVersion', productVersion);
    const url = `${this.options.apiUrl.replace(/\/$/, '')}/config-server/${kind}?${query.toString()}`;
    const cached = this.cache.get(url);
    const headers: Record<string, string> = {
      authorization: `Bearer ${await this.tokens.token()}`,
      accept: 'application/json',
    };
    if (cached !== undefined) headers['if-none-match'] = cached.etag;
    const response = await this.fetchImpl(url, { headers, signal: AbortSignal.timeout(10_000) });
    if (response.status === 304 && cached !== undefined) return cached.body;
    if (!response.ok)
      throw new RuntimeRequestError(response.status, `${kind}: HTTP ${response.status} ${await response.text()}`);
    const body: unknown = await response.json();
    const etag = response.headers.get('etag');
    if (etag !== null) this.cache.set(url, { etag, body });
    return body;
  }

  /** Opens the controller socket and registers; on a lost connection it reconnects and registers again. */
  async register(): Promise<string> {
    this.closed = false;
    try {
      await this.connect();
    } catch (error) {
      // The first registration's failure is the caller's to handle; reconnects follow only a success.
      this.closed = true;
      clearTimeout(this.reconnectTimer);
      this.socket?.terminate();
      throw error;
    }
    return this.runtimeInstanceId ?? '';
  }

  lookup(serviceId: string, filter: DiscoveryFilter = {}): Promise<LookupResult> {
    return this.call('discovery/lookup', discoveryParams(serviceId, filter)) as Promise<LookupResult>;
  }

  /**
   * `discovery/subscribe` (DESIGN 8): `onChange` gets the current node set now and the whole new set on
   * every change, on any controller replica. After a reconnect the client subscribes again and `onChange`
   * gets the set as it is then, so nothing that happened while disconnected is missed. Needs `register()`.
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

  private async watch(watch: Watch): Promise<void> {
    const { subscriptionId, ...result } = (await this.call('discovery/subscribe', watch.params)) as LookupResult & {
      subscriptionId: string;
    };
    watch.subscriptionId = subscriptionId;
    watch.onChange(result);
  }

  /**
   * `service/update_metadata` (DESIGN 8): the instance's new version, protocol, port or tags, sent as the
   * notification (no answer; an invalid value throws here). Remembered: every re-registration carries them.
   */
  updateMetadata(update: MetadataUpdate): void {
    const params = this.metadata.apply(update);
    // Sent behind the registration when one is in flight: the controller applies notifications in order.
    if (this.socket?.readyState !== WebSocket.OPEN) return;
    this.socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'service/update_metadata', params }));
  }

  /** Deregisters and closes the socket; the client reconnects no more. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.refreshTimer);
    clearTimeout(this.reconnectTimer);
    const socket = this.socket;
    if (socket === undefined || socket.readyState !== WebSocket.OPEN) return;
    if (this.runtimeInstanceId !== undefined) {
      await this.call('service/deregister', { runtimeInstanceId: this.runtimeInstanceId }).catch(() => undefined);
    }
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      socket.close(1000, 'runtime closing');
      setTimeout(resolve, 2000).unref();
    });
  }

  private async connect(): Promise<void> {
    const token = await this.tokens.token();
    const url = `${this.options.controllerUrl.replace(/\/$/, '')}/ws/microservice`;
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
    this.socket = socket;
    socket.on('message', (data: Buffer) => this.onMessage(data.toString('utf8')));
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('unexpected-response', (_request, response) => {
        reject(
          new RuntimeRequestError(
            response.statusCode ?? 0,
            `controller refused the upgrade: HTTP ${response.statusCode}`,
          ),
        );
        socket.terminate();
      });
      // Before the socket opens, its failure is this attempt's (reported once, by the caller).
      socket.once('error', (error) => reject(new RuntimeRequestError(0, `controller unreachable: ${causeOf(error)}`)));
    });
    // Only an opened socket is a connection that can be lost and reported as such.
    socket.on('close', (code, reason) => this.onClose(socket, code, reason.toString()));
    socket.on('error', (error) => this.emit({ type: 'error', error, during: 'connection' }));
    const { serviceId, envTag, productId, productVersion } = this.options;
    const params: Record<string, unknown> = { serviceId, ...this.metadata.current };
    if (envTag !== undefined && envTag !== '') params.envTag = envTag;
    // The product's layers feed its config too: the controller pushes their changes as well.
    if (productId !== undefined && productVersion !== undefined) Object.assign(params, { productId, productVersion });
    const result = (await this.call('service/register', params).catch((error: unknown) => {
      // Unregistered, the socket is of no use: dropped quietly, the caller reports and retries.
      socket.removeAllListeners('close');
      socket.terminate();
      throw error;
    })) as { runtimeInstanceId: string };
    this.runtimeInstanceId = result.runtimeInstanceId;
    const reconnect =
      this.lostAt === undefined ? undefined : { attempts: this.attempt, downMs: Date.now() - this.lostAt };
    this.attempt = 0;
    this.lostAt = undefined;
    this.scheduleRefresh();
    this.emit({ type: 'registered', runtimeInstanceId: result.runtimeInstanceId, ...(reconnect && { reconnect }) });
    // The letter: updates are re-sent after a reconnect (the registration above already carried them).
    const updates = this.metadata.updates;
    if (reconnect !== undefined && updates !== undefined) {
      socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'service/update_metadata', params: updates }));
    }
    // Subscriptions belong to a socket: a new socket needs them again.
    for (const watch of this.watches) {
      await this.watch(watch).catch((error: unknown) => this.fail('subscribe', error));
    }
    // Pushes sent while the socket was down are lost: what changed meanwhile is read now.
    if (reconnect !== undefined) this.reloadConfig({ type: 'reconnected' });
  }

  /** Sends `session/refresh` with a renewed token before the socket's token expires (DESIGN 8). */
  private scheduleRefresh(): void {
    clearTimeout(this.refreshTimer);
    const renewAt = this.tokens.renewAt;
    if (renewAt === undefined) return;
    // At the token's renewal point (a fifth of its lifetime left), never in a tight loop.
    const delay = Math.max(250, renewAt - Date.now());
    this.refreshTimer = setTimeout(() => void this.refresh(), delay);
    this.refreshTimer.unref();
  }

  private async refresh(): Promise<void> {
    try {
      const jwt = await this.tokens.renewed();
      const result = (await this.call('session/refresh', { jwt })) as { exp: number };
      this.emit({ type: 'refreshed', exp: result.exp });
      this.scheduleRefresh();
    } catch (error) {
      this.fail('token renewal', error);
      this.refreshTimer = setTimeout(() => void this.refresh(), 5_000);
      this.refreshTimer.unref();
    }
  }

  private call(method: string, params: Record<string, unknown>): Promise<unknown> {
    const socket = this.socket;
    if (socket === undefined || socket.readyState !== WebSocket.OPEN) {
      return Promise.reject(new RuntimeRequestError(0, 'not connected to the controller'));
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  private onMessage(text: string): void {
    let message: {
      id?: unknown;
      method?: unknown;
      params?: unknown;
      result?: unknown;
      error?: { code: number; message: string; data?: { status?: number } };
    };
    try {
      message = JSON.parse(text) as typeof message;
    } catch {
      return;
    }
    if (message.method === 'discovery/changed') return this.changed(message.params);
    if (message.method === 'config/changed') return this.configChanged(message.params);
    if (typeof message.id !== 'number') return;
    const pending = this.pending.get(message.id);
    if (pending === undefined) return;
    this.pending.delete(message.id);
    if (message.error !== undefined) {
      pending.reject(
        new RuntimeRequestError(message.error.data?.status ?? 0, `${message.error.code} ${message.error.message}`),
      );
    } else {
      pending.resolve(message.result);
    }
  }

  private changed(params: unknown): void {
    if (typeof params !== 'object' || params === null) return;
    const { subscriptionId, ...result } = params as LookupResult & { subscriptionId?: unknown };
    for (const watch of this.watches) {
      if (watch.subscriptionId !== undefined && watch.subscriptionId === subscriptionId) watch.onChange(result);
    }
  }

  private configChanged(params: unknown): void {
    if (typeof params !== 'object' || params === null) return;
    const { layer, version } = params as { layer?: ConfigLayerAddress; version?: unknown };
    if (typeof layer !== 'object' || layer === null) return;
    this.reloadConfig({ type: 'pushed', layer, version: typeof version === 'number' ? version : null });
  }

  private onClose(socket: WebSocket, code: number, reason: string): void {
    if (socket !== this.socket) return;
    for (const watch of this.watches) watch.subscriptionId = undefined;
    clearTimeout(this.refreshTimer);
    for (const pending of this.pending.values()) pending.reject(new RuntimeRequestError(0, `socket closed ${code}`));
    this.pending.clear();
    this.lostAt ??= Date.now();
    this.emit({ type: 'disconnected', code, reason });
    if (!this.closed) this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.reconnectTimer !== undefined) return; // one attempt pending at a time
    const delayMs = backoffDelay(this.attempt++, this.options.maxBackoffMs ?? 30_000);
    this.emit({ type: 'reconnecting', attempt: this.attempt, delayMs });
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connect().catch((error: unknown) => {
        // A socket that opened but failed to register closes too: one reconnect is scheduled either way.
        this.fail('reconnect', error);
        if (!this.closed) this.scheduleReconnect();
      });
    }, delayMs);
  }

  private fail(during: RuntimeClientActivity, error: unknown): void {
    this.emit({ type: 'error', error: error instanceof Error ? error : new Error(String(error)), during });
  }

  private emit(event: RuntimeClientEvent): void {
    this.options.onEvent?.(event);
  }
}
