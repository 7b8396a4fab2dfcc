import type { IncomingMessage } from 'node:http';
import { UseFilters, type BeforeApplicationShutdown } from '@nestjs/common';
import {
  ConnectedSocket,
  MessageBody,
  SubscribeMessage,
  WebSocketGateway,
  type OnGatewayConnection,
  type OnGatewayDisconnect,
  type OnGatewayInit,
} from '@nestjs/websockets';
import type { WebSocket, WebSocketServer } from 'ws';
import { DeclareAccess } from '#platform';
import { CurrentPrincipal, type Principal } from '#token-binding';
import { JsonRpcRethrowFilter } from '../jsonrpc/jsonrpc.filter.js';
import { INVALID_FRAME, JSONRPC_ERRORS, JsonRpcError, UNKNOWN_METHOD } from '../jsonrpc/jsonrpc.js';
import { JsonRpcParams } from '../jsonrpc/jsonrpc-validation.pipe.js';
import { ChangeNotifier } from './discovery/change-notifier.js';
import { Connections, RegistryConnection } from './sessions/connection.js';
import { DiscoveryService } from './discovery/discovery.service.js';
import { DeregisterParams } from './dto/deregister.params.js';
import { LookupParams } from './dto/lookup.params.js';
import { RegisterParams } from './dto/register.params.js';
import { UnsubscribeParams } from './dto/unsubscribe.params.js';
import { UpdateMetadataParams } from './dto/update-metadata.params.js';
import { Liveness } from './sessions/liveness.js';
import { PendingWrites } from './sessions/pending-writes.js';
import { RegistryService } from './registry.service.js';
import { RpcAccess } from './sessions/rpc-token.guard.js';
import type {
  DeregisterResult,
  LookupResult,
  RefreshResult,
  RegisterResult,
  SubscribeResult,
  UnsubscribeResult,
  UpdateMetadataResult,
} from './runtime-instance.view.js';
import { SessionRefresh } from './sessions/session-refresh.js';
import { RegistryShutdown } from './sessions/shutdown.js';
import { TokenExpiry } from './sessions/token-expiry.js';
import { UpgradeAuth } from './sessions/upgrade-auth.js';

export const WS_PATH = '/ws/microservice';
/** Larger frames close the socket with 1009 (ws `maxPayload`, DESIGN 8). */
export const MAX_FRAME_BYTES = 64 * 1024;

/**
 * A handler's socket parameter. An alias, so the design type TypeScript records is `Object` (not
 * `Function`) and the app's global validation pipe leaves the socket alone.
 */
type Socket = Readonly<WebSocket>;

/**
 * `ws://HOST:CONTROLLER_PORT/ws/microservice` (DESIGN 8): routes each JSON-RPC method to its service and
 * hands each socket's lifecycle to the collaborators named after their jobs.
 */
@WebSocketGateway({ path: WS_PATH, maxPayload: MAX_FRAME_BYTES })
@UseFilters(JsonRpcRethrowFilter)
export class RegistryGateway
  implements OnGatewayInit<WebSocketServer>, OnGatewayConnection, OnGatewayDisconnect, BeforeApplicationShutdown
{
  constructor(
    private readonly registry: RegistryService,
    private readonly discovery: DiscoveryService,
    private readonly connections: Connections,
    private readonly upgradeAuth: UpgradeAuth,
    private readonly liveness: Liveness,
    private readonly expiry: TokenExpiry,
    private readonly sessions: SessionRefresh,
    private readonly notifier: ChangeNotifier,
    private readonly writes: PendingWrites,
    private readonly shutdown: RegistryShutdown,
  ) {}

  afterInit(server: WebSocketServer): void {
    this.upgradeAuth.attach(server);
    this.liveness.start();
  }

  handleConnection(client: WebSocket, request: IncomingMessage): void {
    if (this.shutdown.turnedAway(client)) return;
    const connection = new RegistryConnection(this.upgradeAuth.tokenOf(request));
    this.connections.open(client, connection);
    this.expiry.watch(client, connection);
    this.liveness.watch(client, connection);
    this.upgradeAuth.requireTokenSoon(client, connection);
  }

  handleDisconnect(client: WebSocket): void {
    const connection = this.connections.close(client);
    if (connection === undefined) return;
    this.discovery.closed(connection);
    // After shutdown released everything this process held there is nothing left to mark.
    if (connection.instances.size === 0 || this.shutdown.released) return;
    this.writes.background(this.registry.markDisconnected(connection.id, [...connection.instances]));
  }

  @SubscribeMessage('service/register')
  @RpcAccess('registry:register', { binding: 'register', closesSocket: true })
  async register(
    @ConnectedSocket() client: Socket,
    @MessageBody('params', new JsonRpcParams(RegisterParams)) params: Readonly<RegisterParams>,
    @CurrentPrincipal() caller: Principal,
  ): Promise<RegisterResult> {
    return this.writes.track(this.registry.register(this.connections.of(client), params, caller));
  }

  @SubscribeMessage('service/deregister')
  @RpcAccess('registry:register')
  async deregister(
    @ConnectedSocket() client: Socket,
    @MessageBody('params', new JsonRpcParams(DeregisterParams)) params: Readonly<DeregisterParams>,
  ): Promise<DeregisterResult> {
    const connection = this.connections.of(client);
    return this.writes.track(this.registry.deregister(connection, params.runtimeInstanceId, params.reason));
  }

  /**
   * `service/update_metadata` (DESIGN 8), sent by upstream runtimes as a notification: never answered then,
   * its refusals logged by the adapter. Sent as a request, it is answered like any method.
   */
  @SubscribeMessage('service/update_metadata')
  @RpcAccess('registry:register')
  async updateMetadata(
    @ConnectedSocket() client: Socket,
    @MessageBody('params', new JsonRpcParams(UpdateMetadataParams)) params: Readonly<UpdateMetadataParams>,
  ): Promise<UpdateMetadataResult> {
    return this.writes.track(this.registry.updateMetadata(this.connections.of(client), params));
  }

  @SubscribeMessage('discovery/lookup')
  @RpcAccess('registry:discover', { binding: 'lookup' })
  async lookup(
    @MessageBody('params', new JsonRpcParams(LookupParams)) params: Readonly<LookupParams>,
  ): Promise<LookupResult> {
    return this.registry.lookup(params);
  }

  /** `discovery/subscribe`: the lookup's answer now, then `discovery/changed` on every change (DESIGN 8). */
  @SubscribeMessage('discovery/subscribe')
  // A subscription is lasting state, like a registration: a mismatch closes the socket.
  @RpcAccess('registry:discover', { binding: 'lookup', closesSocket: true })
  async subscribe(
    @ConnectedSocket() client: Socket,
    @MessageBody('params', new JsonRpcParams(LookupParams)) params: Readonly<LookupParams>,
  ): Promise<SubscribeResult> {
    return this.discovery.subscribe(this.connections.of(client), params, this.notifier.to(client));
  }

  @SubscribeMessage('discovery/unsubscribe')
  @RpcAccess('registry:discover')
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
  @RpcAccess(null)
  unknownMethod(): never {
    throw new JsonRpcError(JSONRPC_ERRORS.methodNotFound.code, JSONRPC_ERRORS.methodNotFound.message);
  }

  /**
   * A frame that is not a valid request (the adapter routes it here): behind the token guard, so a socket
   * without a verified token is closed 1008 for it too (DESIGN 8); the adapter then answers the frame's error.
   */
  @SubscribeMessage(INVALID_FRAME)
  @RpcAccess(null)
  invalidFrame(): null {
    return null;
  }

  /**
   * `session/refresh` `{ jwt }` (DESIGN 8). Not behind `RpcTokenGuard`: the socket's own token may already
   * be expired (within the grace period) when the refresh arrives.
   */
  @SubscribeMessage('session/refresh')
  // Its own token decides (the socket's may have expired): SessionRefresh checks the capability and the claims.
  @DeclareAccess({ capability: 'registry:register', hostRule: 'binding', hostIn: [] })
  async refresh(@ConnectedSocket() client: Socket, @MessageBody('params') params: unknown): Promise<RefreshResult> {
    const connection = this.connections.of(client);
    const result = await this.sessions.refresh(connection, params);
    this.expiry.watch(client, connection);
    return result;
  }

  /** SIGTERM (via `app.close()`): before Nest closes the ws server, so every socket gets its 1001 first. */
  beforeApplicationShutdown(): Promise<void> {
    return this.shutdown.run();
  }
}
