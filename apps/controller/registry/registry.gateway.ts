import type { IncomingMessage } from 'node:http';
import { Inject, Logger, UseFilters, type BeforeApplicationShutdown } from '@nestjs/common';
import {
  ConnectedSocket,
  MessageBody,
  SubscribeMessage,
  WebSocketGateway,
  type OnGatewayConnection,
  type OnGatewayDisconnect,
  type OnGatewayInit,
} from '@nestjs/websockets';
import type { Gauge } from 'prom-client';
import type { VerifyClientCallbackAsync, WebSocket, WebSocketServer } from 'ws';
import { Metrics, SETTINGS, type Settings } from '#platform';
import {
  bearerCredential,
  CurrentPrincipal,
  KeySourceUnavailableError,
  TokenVerifier,
  type Principal,
} from '#token-binding';
import { JsonRpcRethrowFilter } from '../jsonrpc/jsonrpc.filter.js';
import { JsonRpcParams } from '../jsonrpc/jsonrpc-validation.pipe.js';
import { Connections, RegistryConnection, type VerifiedToken } from './connection.js';
import { DiscoveryService } from './discovery.service.js';
import { DeregisterParams } from './dto/deregister.params.js';
import { LookupParams } from './dto/lookup.params.js';
import { RegisterParams } from './dto/register.params.js';
import { UnsubscribeParams } from './dto/unsubscribe.params.js';
import { LeaseService } from './lease.service.js';
import { CLOSE_GOING_AWAY, CLOSE_SERVICE_RESTART } from './registry.errors.js';
import { CLOSE_POLICY_VIOLATION, JSONRPC_ERRORS, JsonRpcError, UNKNOWN_METHOD } from '../jsonrpc/jsonrpc.js';
import { refuseInvalidToken, refuseUnavailable } from '../jsonrpc/upgrade-refusal.js';
import { RpcAuthenticated } from './rpc-token.guard.js';
import { RegistryService } from './registry.service.js';
import { SessionRefresh } from './session-refresh.js';
import { TokenExpiry } from './token-expiry.js';
import type {
  ChangedParams,
  DeregisterResult,
  LookupResult,
  RefreshResult,
  RegisterResult,
  SubscribeResult,
  UnsubscribeResult,
} from './runtime-instance.view.js';

export const WS_PATH = '/ws/microservice';
/** Larger frames close the socket with 1009 (ws `maxPayload`, DESIGN 8). */
export const MAX_FRAME_BYTES = 64 * 1024;
/** A subscriber this far behind (unsent bytes) is dropped rather than buffered without bound. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** How long a shutting-down controller waits for a client to answer its 1001 close. */
const SHUTDOWN_CLOSE_TIMEOUT_MS = 2000;

/**
 * A handler's socket parameter. An alias, so the design type TypeScript records is `Object` (not
 * `Function`) and the app's global validation pipe leaves the socket alone.
 */
type Socket = Readonly<WebSocket>;

/** ws's verifyClient callback; only ever called to accept: refusals are written by `refuseUpgrade`. */
type Accept = (verified: true) => void;

/**
 * `ws://HOST:CONTROLLER_PORT/ws/microservice` (DESIGN 8): JSON-RPC methods `service/register`,
 * `service/deregister` and `discovery/lookup`, token checks on the upgrade and on every call, and the
 * liveness that turns closed or silent sockets into disconnected instances.
 */
@WebSocketGateway({ path: WS_PATH, maxPayload: MAX_FRAME_BYTES })
@UseFilters(JsonRpcRethrowFilter)
export class RegistryGateway
  implements OnGatewayInit<WebSocketServer>, OnGatewayConnection, OnGatewayDisconnect, BeforeApplicationShutdown
{
  private readonly logger = new Logger('RegistryGateway');
  /** Bearer tokens verified at the upgrade, picked up by `handleConnection`. */
  private readonly upgradeTokens = new WeakMap<IncomingMessage, VerifiedToken>();
  /** Registry writes in flight: shutdown (and tests) wait for them. */
  private readonly pending = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private released = false;

  constructor(
    private readonly registry: RegistryService,
    private readonly discovery: DiscoveryService,
    private readonly connections: Connections,
    private readonly verifier: TokenVerifier,
    private readonly expiry: TokenExpiry,
    private readonly sessions: SessionRefresh,
    @Inject(SETTINGS) private readonly settings: Settings,
    lease: LeaseService,
    metrics: Metrics,
  ) {
    // Another replica reaped this one (it froze, or lost the database too long) and disconnected its
    // instances: every runtime reconnects and registers again (1012, service restart).
    lease.onLost(() => {
      for (const client of this.connections.keys()) client.close(CLOSE_SERVICE_RESTART, 'Lease lost');
    });
    const current = (read: () => number) => (gauge: Gauge) => {
      gauge.set(read());
      return Promise.resolve();
    };
    metrics.gauge(
      'bindery_registered_instances',
      'Connected runtime instances held by this controller process',
      [],
      current(() => this.heldInstances()),
    );
    metrics.gauge(
      'bindery_ws_connections',
      'Open registry WebSocket connections of this controller process',
      [],
      current(() => this.openConnections()),
    );
    metrics.gauge(
      'bindery_discovery_subscriptions',
      'discovery/subscribe subscriptions of this controller process',
      [],
      current(() => this.subscriptions()),
    );
  }

  afterInit(server: WebSocketServer): void {
    // The gateway decorator cannot reach injected services, so the upgrade check is attached here.
    const verifyClient: VerifyClientCallbackAsync = (info, accept) => {
      void this.verifyUpgrade(info.req, accept);
    };
    server.options.verifyClient = verifyClient;
    this.timer = setInterval(() => this.tick(), this.settings.wsPingIntervalMs);
    this.timer.unref();
  }

  handleConnection(client: WebSocket, request: IncomingMessage): void {
    if (this.connections.stopping) {
      client.close(CLOSE_GOING_AWAY, 'Server shutting down');
      return;
    }
    const connection = new RegistryConnection(this.upgradeTokens.get(request));
    this.connections.open(client, connection);
    this.expiry.watch(client, connection);
    const seen = (): void => {
      connection.alive = true;
    };
    client.on('pong', seen);
    client.on('message', seen);
    if (!connection.authenticated) {
      // DESIGN 8: a socket must present a verified token soon, or it gives its slot back.
      const timer = setTimeout(() => {
        if (!connection.authenticated && client.readyState === client.OPEN) {
          client.close(CLOSE_POLICY_VIOLATION, 'Authentication timeout');
        }
      }, this.settings.wsAuthTimeoutMs);
      timer.unref();
      client.once('close', () => clearTimeout(timer));
    }
  }

  handleDisconnect(client: WebSocket): void {
    const connection = this.connections.close(client);
    if (connection === undefined) return;
    this.discovery.closed(connection);
    // After shutdown released everything this process held there is nothing left to mark.
    if (connection.instances.size === 0 || this.released) return;
    this.background(this.registry.markDisconnected(connection.id, [...connection.instances]));
  }

  @SubscribeMessage('service/register')
  @RpcAuthenticated('register', { closesSocket: true })
  async register(
    @ConnectedSocket() client: Socket,
    @MessageBody('params', new JsonRpcParams(RegisterParams)) params: Readonly<RegisterParams>,
    @CurrentPrincipal() caller: Principal,
  ): Promise<RegisterResult> {
    const connection = this.connections.of(client);
    const result = await this.track(this.registry.register(connection, params, caller));
    this.connections.adopt(connection, params.jwt, caller);
    this.expiry.watch(client, connection);
    return result;
  }

  @SubscribeMessage('service/deregister')
  @RpcAuthenticated()
  async deregister(
    @ConnectedSocket() client: Socket,
    @MessageBody('params', new JsonRpcParams(DeregisterParams)) params: Readonly<DeregisterParams>,
  ): Promise<DeregisterResult> {
    return this.track(this.registry.deregister(this.connections.of(client), params.runtimeInstanceId));
  }

  @SubscribeMessage('discovery/lookup')
  @RpcAuthenticated('lookup')
  async lookup(
    @MessageBody('params', new JsonRpcParams(LookupParams)) params: Readonly<LookupParams>,
  ): Promise<LookupResult> {
    return this.registry.lookup(params);
  }

  /** `discovery/subscribe`: the lookup's answer now, then `discovery/changed` on every change (DESIGN 8). */
  @SubscribeMessage('discovery/subscribe')
  // A subscription is lasting state, like a registration: a mismatch closes the socket.
  @RpcAuthenticated('lookup', { closesSocket: true })
  async subscribe(
    @ConnectedSocket() client: Socket,
    @MessageBody('params', new JsonRpcParams(LookupParams)) params: Readonly<LookupParams>,
  ): Promise<SubscribeResult> {
    return this.discovery.subscribe(this.connections.of(client), params, (changed) =>
      this.notifyChanged(client, changed),
    );
  }

  @SubscribeMessage('discovery/unsubscribe')
  @RpcAuthenticated()
  unsubscribe(
    @ConnectedSocket() client: Socket,
    @MessageBody('params', new JsonRpcParams(UnsubscribeParams)) params: Readonly<UnsubscribeParams>,
  ): UnsubscribeResult {
    return this.discovery.unsubscribe(this.connections.of(client), params.subscriptionId);
  }

  /**
   * Every method no handler names (the adapter routes them here): behind the token guard like any call, so
   * a socket without a verified token gets -32001 and close 1008 (DESIGN 8), a verified one -32601.
   */
  @SubscribeMessage(UNKNOWN_METHOD)
  @RpcAuthenticated()
  unknownMethod(): never {
    throw new JsonRpcError(JSONRPC_ERRORS.methodNotFound.code, JSONRPC_ERRORS.methodNotFound.message);
  }

  /**
   * `session/refresh` `{ jwt }` (DESIGN 8). Not behind `RpcTokenGuard`: the socket's own token may already
   * be expired (within the grace period) when the refresh arrives.
   */
  @SubscribeMessage('session/refresh')
  async refresh(@ConnectedSocket() client: Socket, @MessageBody('params') params: unknown): Promise<RefreshResult> {
    const connection = this.connections.of(client);
    const result = await this.sessions.refresh(connection, params);
    this.expiry.watch(client, connection);
    return result;
  }

  /** SIGTERM (via `app.close()`): close every socket with 1001, disconnect its instances, release the lease. */
  async beforeApplicationShutdown(): Promise<void> {
    this.connections.stopping = true;
    clearInterval(this.timer);
    await Promise.all([...this.connections.keys()].map((client) => this.closeGracefully(client)));
    await this.settled();
    try {
      await this.registry.releaseAll();
    } finally {
      this.released = true;
    }
  }

  openConnections(): number {
    return this.connections.size;
  }

  /** `discovery/subscribe` subscriptions held by the open connections of this process. */
  subscriptions(): number {
    return this.discovery.size;
  }

  /** Instances registered on the open connections of this process. */
  heldInstances(): number {
    let held = 0;
    for (const connection of this.connections.values()) held += connection.instances.size;
    return held;
  }

  /** Resolves once every registry write started so far has finished. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  private async verifyUpgrade(request: IncomingMessage, accept: Accept): Promise<void> {
    if (this.connections.stopping) return refuseUnavailable(request, 'The controller is shutting down');
    if (this.connections.size >= this.settings.wsMaxConnections) return this.full(request, 'WS_MAX_CONNECTIONS');
    const credential = bearerCredential(request.headers.authorization);
    // Without Bearer credentials (no header, another scheme, `Bearer` alone: RFC 6750 3.1) the upgrade
    // proceeds; `service/register` then needs `params.jwt` (DESIGN 8).
    if (credential.kind === 'none') {
      // Sockets without a token have their own cap, so they can never use up the slots of registered ones.
      if (this.connections.unauthenticated >= this.settings.wsMaxUnauthenticated) {
        return this.full(request, 'WS_MAX_UNAUTHENTICATED');
      }
      return accept(true);
    }
    if (credential.kind === 'malformed') return refuseInvalidToken(request);
    const { token } = credential;
    let principal: Principal;
    try {
      principal = await this.verifier.verify(token);
    } catch (error) {
      if (error instanceof KeySourceUnavailableError) return refuseUnavailable(request, 'Token keys are unavailable');
      return refuseInvalidToken(request);
    }
    this.upgradeTokens.set(request, { token, principal });
    accept(true);
  }

  private notifyChanged(client: WebSocket, params: ChangedParams): void {
    if (client.readyState !== client.OPEN) return;
    if (client.bufferedAmount > MAX_BUFFERED_BYTES) {
      this.logger.warn('subscriber is not reading its notifications; dropping it');
      client.terminate();
      return;
    }
    client.send(JSON.stringify({ jsonrpc: '2.0', method: 'discovery/changed', params }));
  }

  private full(request: IncomingMessage, limit: string): void {
    this.logger.warn({ limit }, 'WebSocket upgrade refused: connection limit reached');
    refuseUnavailable(request, `The controller holds as many sockets as ${limit} allows`);
  }

  /** Liveness (DESIGN 8): a socket that did not answer the previous ping is dropped; the others are pinged. */
  private tick(): void {
    if (this.connections.stopping) return;
    const answered: string[] = [];
    for (const [client, connection] of this.connections) {
      if (!connection.alive) {
        // The close event that follows marks its instances disconnected.
        client.terminate();
        continue;
      }
      connection.alive = false;
      answered.push(...connection.instances);
      client.ping();
    }
    if (answered.length > 0) this.background(this.registry.touch(answered));
  }

  private closeGracefully(client: WebSocket): Promise<void> {
    return new Promise((resolve) => {
      if (client.readyState === client.CLOSED) return resolve();
      const timer = setTimeout(() => {
        client.terminate();
        resolve();
      }, SHUTDOWN_CLOSE_TIMEOUT_MS);
      client.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      client.close(CLOSE_GOING_AWAY, 'Server shutting down');
    });
  }

  private track<T>(work: Promise<T>): Promise<T> {
    const done = work.then(
      () => undefined,
      () => undefined,
    );
    this.pending.add(done);
    void done.finally(() => this.pending.delete(done));
    return work;
  }

  private background(work: Promise<unknown>): void {
    void this.track(work).catch((error: unknown) => {
      this.logger.error({ err: error }, 'registry update failed');
    });
  }
}
