import { randomUUID, type KeyObject } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { WebSocket } from 'ws';
import type { Deadline } from '#platform';
import type { Principal } from '#token-binding';
import { JSONRPC_ERRORS, JsonRpcError } from '../../jsonrpc/jsonrpc.js';
import { PushTargets, type ConfigBinding } from '../push/push-targets.js';

/** The log context of every line about registry sockets, whichever collaborator writes it. */
export const REGISTRY_LOG_CONTEXT = 'RegistryGateway';

/**
 * A token this process verified, the principal its verification returned (claims are read there, not
 * re-decoded) and the key that verified it (the socket acts only while the key store still holds it).
 */
export interface VerifiedToken {
  readonly token: string;
  readonly principal: Principal;
  readonly key: KeyObject;
}

/**
 * What the controller knows about one WebSocket: the token it may act with, the instances it
 * registered (its close disconnects them; only it may deregister them) and its liveness.
 */
export class RegistryConnection {
  /** Stored with each instance it registers, so a stale socket's close never touches a newer registration. */
  readonly id = randomUUID();
  /** The registrations it holds; one moved to another socket is no longer here (`Connections.hold`). */
  readonly instances = new Set<string>();
  /** Its `discovery/subscribe` subscriptions; they end with the socket. */
  readonly subscriptions = new Set<string>();
  /** Answered the last ping (or sent anything) since the previous liveness tick. */
  alive = true;
  closed = false;
  /** Closes the socket when its token has been expired for WS_TOKEN_GRACE_MS (DESIGN 8). */
  expiry: Deadline | undefined;
  /** The verified token the socket acts with: the upgrade header's, a registration's, or a refresh's. */
  private current: VerifiedToken | undefined;
  /** On a socket without a header token: the `params.jwt` of its first registration, the only one it takes. */
  private claimed: string | undefined;

  /** `header`: the bearer token of the upgrade, verified there. */
  constructor(header: VerifiedToken | undefined) {
    this.current = header;
  }

  /**
   * The token a call acts with (DESIGN 8): the socket's token is verified once, from the upgrade header or
   * else from the first `service/register` carrying `params.jwt`; every later call acts with that token
   * (a `params.jwt` it carries must equal it). Undefined means unauthorized.
   */
  tokenFor(jwt: string | undefined, method: 'register' | 'other'): string | undefined {
    if (this.current !== undefined)
      return jwt === undefined || jwt === this.current.token ? this.current.token : undefined;
    if (method !== 'register') return undefined;
    // Claimed before it is verified: a second registration in flight cannot bring a token of its own.
    this.claimed ??= jwt;
    return jwt !== undefined && jwt === this.claimed ? jwt : undefined;
  }

  /** Holds a verified token: from the upgrade header or a successful `service/register` with `params.jwt`. */
  get authenticated(): boolean {
    return this.current !== undefined;
  }

  /** The token the socket holds now, if any. */
  get token(): string | undefined {
    return this.current?.token;
  }

  /** The verified principal of the socket's token: its expiry and the refresh rule read its claims. */
  get principal(): Principal | undefined {
    return this.current?.principal;
  }

  /** The socket's verified token, with its principal and the key that verified it. */
  get held(): VerifiedToken | undefined {
    return this.current;
  }

  /** The first `service/register`'s `params.jwt`, just verified: the socket's token from now on. */
  adopt(verified: VerifiedToken): void {
    // Never another token than the one held: only `session/refresh` replaces it.
    if (this.current !== undefined) return;
    this.current = verified;
  }

  /** `session/refresh`: a newly verified token of the same sid, host and env replaces the socket's. */
  refresh(fresh: VerifiedToken): void {
    this.current = fresh;
  }
}

/** The open sockets of this process and their state, shared by the gateway, its collaborators and the token guard. */
@Injectable()
export class Connections extends Map<WebSocket, RegistryConnection> {
  /** Set at shutdown: no call is served any more. */
  stopping = false;
  /** Open sockets without a verified token yet: they have their own, smaller cap (WS_MAX_UNAUTHENTICATED). */
  private waiting = 0;
  /** Each held registration by the layers that feed it: where `config/changed` goes (DESIGN 14). */
  readonly pushTargets = new PushTargets<RegistryConnection>();
  private readonly sockets = new Map<RegistryConnection, WebSocket>();

  get unauthenticated(): number {
    return this.waiting;
  }

  open(client: WebSocket, connection: RegistryConnection): void {
    this.set(client, connection);
    this.sockets.set(connection, client);
    if (!connection.authenticated) this.waiting += 1;
  }

  /** The socket closed: forgets it and returns what it held (undefined when it was never opened here). */
  close(client: WebSocket): RegistryConnection | undefined {
    const connection = this.get(client);
    if (connection === undefined) return undefined;
    this.delete(client);
    this.sockets.delete(connection);
    connection.closed = true;
    connection.expiry?.cancel();
    if (!connection.authenticated) this.waiting -= 1;
    for (const id of connection.instances) this.pushTargets.release(connection, id);
    return connection;
  }

  /** The open socket of `connection`, undefined once it closed. */
  socketOf(connection: RegistryConnection): WebSocket | undefined {
    return this.sockets.get(connection);
  }

  /**
   * `connection` registered `id` (DESIGN 8 Ownership): the registration belongs to it alone from now on, so
   * a socket that held it before neither gets its `config/changed` nor counts, touches or deregisters it.
   */
  hold(connection: RegistryConnection, id: string, binding: ConfigBinding): void {
    const before = this.pushTargets.ownerOf(id);
    if (before !== undefined && before !== connection) before.instances.delete(id);
    connection.instances.add(id);
    // Closed while the registration was written: its close already ran, so nothing may be left indexed.
    if (connection.closed) this.pushTargets.release(before ?? connection, id);
    else this.pushTargets.hold(connection, id, binding);
  }

  /** `connection` deregistered `id`: it no longer holds it. */
  release(connection: RegistryConnection, id: string): void {
    connection.instances.delete(id);
    this.pushTargets.release(connection, id);
  }

  /** A registration's `params.jwt` passed verification: the socket counts as authenticated from now on. */
  adopt(connection: RegistryConnection, verified: VerifiedToken): void {
    const before = connection.authenticated;
    connection.adopt(verified);
    if (!before && connection.authenticated && !connection.closed) this.waiting -= 1;
  }

  /** The state of a socket a call arrived on; only a socket that is already closing has none. */
  of(client: Readonly<WebSocket>): RegistryConnection {
    const connection = this.get(client);
    if (connection === undefined) {
      throw new JsonRpcError(JSONRPC_ERRORS.internalError.code, 'The connection is closing', { status: 503 });
    }
    return connection;
  }
}
