import { Injectable, UseGuards, applyDecorators, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { WebSocket } from 'ws';
import {
  Bound,
  KeySourceUnavailableError,
  TokenVerifier,
  type BindingKind,
  type BindingOptions,
  type RpcCall,
} from '#token-binding';
import { Connections } from './connection.js';
import { unauthorized, unavailable } from './registry.errors.js';

/**
 * The token of a JSON-RPC call (DESIGN 8), verified on every call by the same `TokenVerifier` as HTTP:
 * the upgrade header's, else `params.jwt`, else the one adopted at registration. Runs before the binding
 * guard and before params are validated, so a socket without a verified token gets -32001 and close 1008
 * whatever its params hold.
 */
@Injectable()
export class RpcTokenGuard implements CanActivate {
  constructor(
    private readonly connections: Connections,
    private readonly verifier: TokenVerifier,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.connections.stopping) throw unavailable('The controller is shutting down');
    const ws = context.switchToWs();
    const call = ws.getData<RpcCall>();
    const connection = this.connections.of(ws.getClient<WebSocket>());
    const params = call.params as Readonly<Record<string, unknown>> | undefined;
    const jwt = typeof params?.jwt === 'string' ? params.jwt : undefined;
    const token = connection.tokenFor(jwt, call.method === 'service/register' ? 'register' : 'other');
    if (token === undefined) throw unauthorized();
    try {
      call.principal = await this.verifier.verify(token);
    } catch (error) {
      if (error instanceof KeySourceUnavailableError) throw unavailable('Token keys are unavailable; try again');
      throw unauthorized();
    }
    return true;
  }
}

/** A verified token on the call, then (when a rule is named) the binding rule of `TokenBindingGuard`. */
export const RpcAuthenticated = (rule?: BindingKind, options: BindingOptions = {}): MethodDecorator =>
  rule === undefined ? UseGuards(RpcTokenGuard) : applyDecorators(UseGuards(RpcTokenGuard), Bound(rule, options));
