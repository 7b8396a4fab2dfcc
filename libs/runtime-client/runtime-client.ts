import { WebSocket } from 'ws';
import type { ConfigChangeListener } from './config-change.js';
import { ConfigReader, RuntimeRequestError } from './config-reader.js';
import { Discovery } from './discovery.js';
import { JsonRpcCalls, type JsonRpcMessage } from './json-rpc-calls.js';
import { causeOf, type RuntimeClientActivity, type RuntimeClientEvent } from './events.js';
import { InstanceMetadata, type MetadataUpdate } from './instance-metadata.js';
import { TokenSource } from './token-source.js';

import {
  backoffDelay,
  type DiscoveryFilter,
  type DiscoverySubscription,
  type LookupResult,
  type RuntimeClientOptions,
} from './client-types.js';

export { isPlainFileName, RuntimeRequestError } from './config-reader.js';
export {
  backoffDelay,
  type DiscoveryFilter,
  type DiscoverySubscription,
  type LookupResult,
  type RuntimeClientOptions,
} from './client-types.js';
export type { RuntimeClientEvent } from './events.js';
export type { MetadataUpdate, RuntimeInstance } from './instance-metadata.js';
export { configDiff, type ConfigChange, type ConfigChangeListener, type ConfigLayerAddress } from './config-change.js';

/** The longest delay `setTimeout` honours (about 24.8 days); Node fires a longer one after 1 ms. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * What a runtime service imports to bootstrap itself (DESIGN 11): a token of the right profile first,
 * then its configuration, then its registration with the controller, kept alive until `close()`.
 */
export class RuntimeClient {
  private readonly tokens: TokenSource;
  private readonly fetchImpl: typeof fetch;
  private readonly metadata: InstanceMetadata;
  private socket: WebSocket | undefined;
  private readonly calls = new JsonRpcCalls();
  private runtimeInstanceId: string | undefined;
  private closed = false;
  private attempt = 0;
  /** When the last connection was lost (epoch ms); undefined while connected or before the first. */
  private lostAt: number | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private readonly discovery = new Discovery((method, params) => this.call(method, params));
  private readonly configs: ConfigReader;

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
    this.configs = new ConfigReader(options, this.tokens, this.fetchImpl, (error) =>
      this.fail('config re-read', error),
    );
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
    return this.configs.config();
  }

  certs(): Promise<Record<string, string>> {
    return this.configs.certs();
  }

  files(): Promise<Record<string, string>> {
    return this.configs.files();
  }

  /** See `ConfigReader.onConfigChange` (DESIGN 14). */
  onConfigChange(callback: ConfigChangeListener): Promise<() => void> {
    return this.configs.onConfigChange(callback);
  }

  /** See `ConfigReader.writeFiles`. */
  writeFiles(dir: string, kind: 'files' | 'certs' = 'files'): Promise<string[]> {
    return this.configs.writeFiles(dir, kind);
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
    return this.discovery.lookup(serviceId, filter);
  }

  /** See `Discovery.subscribe` (DESIGN 8). Needs `register()`. */
  subscribe(
    serviceId: string,
    onChange: (nodes: LookupResult) => void,
    filter: DiscoveryFilter = {},
  ): Promise<DiscoverySubscription> {
    return this.discovery.subscribe(serviceId, onChange, filter);
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
    await this.discovery.resubscribe((error) => this.fail('subscribe', error));
    // Pushes sent while the socket was down are lost: what changed meanwhile is read now.
    if (reconnect !== undefined) this.configs.reload({ type: 'reconnected' });
  }

  /** Sends `session/refresh` with a renewed token before the socket's token expires (DESIGN 8). */
  private scheduleRefresh(): void {
    clearTimeout(this.refreshTimer);
    const renewAt = this.tokens.renewAt;
    if (renewAt === undefined) return;
    const left = renewAt - Date.now();
    // At the token's renewal point (a fifth of its lifetime left), never in a tight loop; setTimeout fires at
    // once past MAX_TIMER_MS, so a renewal point further ahead (a token of over a month) is waited for in steps.
    this.refreshTimer = setTimeout(
      () => (left > MAX_TIMER_MS ? this.scheduleRefresh() : void this.refresh()),
      Math.min(Math.max(250, left), MAX_TIMER_MS),
    );
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
    return this.calls.send(this.socket, method, params);
  }

  private onMessage(text: string): void {
    let message: JsonRpcMessage;
    try {
      message = JSON.parse(text) as JsonRpcMessage;
    } catch {
      return;
    }
    if (message.method === 'discovery/changed') return this.discovery.changed(message.params);
    if (message.method === 'config/changed') return this.configs.pushed(message.params);
    this.calls.settle(message);
  }

  private onClose(socket: WebSocket, code: number, reason: string): void {
    if (socket !== this.socket) return;
    this.discovery.detach();
    clearTimeout(this.refreshTimer);
    this.calls.rejectAll(new RuntimeRequestError(0, `socket closed ${code}`));
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
