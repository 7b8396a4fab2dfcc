import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { WebSocket } from 'ws';
import { JSONRPC_ERRORS, JsonRpcError } from '../jsonrpc/jsonrpc.js';

/**
 * What the controller knows about one WebSocket: the token it may act with, the instances it
 * registered (its close disconnects them; only it may deregister them) and its liveness.
 */
export class RegistryConnection {
  /** Stored with each instance it registers, so a stale socket's close never touches a newer registration. */
  readonly id = randomUUID();
  readonly instances = new Set<string>();
  /** Answered the last ping (or sent anything) since the previous liveness tick. */
  alive = true;
  closed = false;
  /** Without an `Authorization` header: the `params.jwt` of the last successful `service/register`. */
  private registeredToken: string | undefined;

  /** `headerToken`: the bearer token of the upgrade, already verified once by then. */
  constructor(private readonly headerToken: string | undefined) {}

  /**
   * The token a call acts with (DESIGN 8): the header's, which a `params.jwt` must then equal; else the
   * call's `params.jwt`; else (not for `service/register`, where it is required) the one adopted at
   * registration. Undefined means unauthorized.
   */
  tokenFor(jwt: string | undefined, method: 'register' | 'other'): string | undefined {
    if (this.headerToken !== undefined) {
      return jwt === undefined || jwt === this.headerToken ? this.headerToken : undefined;
    }
    return method === 'register' ? jwt : (jwt ?? this.registeredToken);
  }

  /** After a successful registration with `params.jwt`: later calls may omit it. */
  adopt(jwt: string | undefined): void {
    if (this.headerToken === undefined && jwt !== undefined) this.registeredToken = jwt;
  }
}

/** The open sockets of this controller process and their state, shared by the gateway and the token guard. */
@Injectable()
export class Connections extends Map<WebSocket, RegistryConnection> {
  /** Set at shutdown: no call is served any more. */
  stopping = false;

  /** The state of a socket a call arrived on; only a socket that is already closing has none. */
  of(client: Readonly<WebSocket>): RegistryConnection {
    const connection = this.get(client);
    if (connection === undefined) {
      throw new JsonRpcError(JSONRPC_ERRORS.internalError.code, 'The connection is closing', { status: 503 });
    }
    return connection;
  }
}
