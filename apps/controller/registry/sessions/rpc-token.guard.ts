import { Injectable, UseGuards, applyDecorators, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { WebSocket } from 'ws';
import { accessOf, DeclareAccess, type Capability } from '#platform';
import {
  Bound,
  capabilitySentence,
  decideAccess,
  KeySourceUnavailableError,
  TokenVerifier,
  type BindingKind,
  type BindingOptions,
  type RpcCall,
} from '#token-binding';
import { Connections, type VerifiedToken } from './connection.js';
import { TokenExpiry } from './token-expiry.js';
import { forbidden, unauthorized, unavailable } from '../registry.errors.js';

/**
 * The token of a JSON-RPC call (DESIGN 8): the socket's, verified once (at the upgrade, or here from the
 * first `service/register` carrying `params.jwt`, by the same `TokenVerifier` as HTTP), and acting until
 * `TokenExpiry` closes the socket `WS_TOKEN_GRACE_MS` after its `exp`. Runs before the binding guard and
 * before params are validated, so a socket without a verified token gets -32001 and close 1008 whatever its
 * params hold.
 */
@Injectable()
export class RpcTokenGuard implements CanActivate {
  constructor(
    private readonly connections: Connections,
    private readonly verifier: TokenVerifier,
    private readonly reflector: Reflector,
    private readonly expiry: TokenExpiry,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.connections.stopping) throw unavailable('The controller is shutting down');
    const ws = context.switchToWs();
    const call = ws.getData<RpcCall>();
    const client = ws.getClient<WebSocket>();
    const connection = this.connections.of(client);
    const params = call.params as Readonly<Record<string, unknown>> | undefined;
    const jwt = typeof params?.jwt === 'string' ? params.jwt : undefined;
    const token = connection.tokenFor(jwt, call.method === 'service/register' ? 'register' : 'other');
    if (token === undefined) throw unauthorized();
    const held = connection.held;
    if (held !== undefined && token === held.token) {
      // Verified once (DESIGN 8): its expiry closes the socket; a key that left the JWKS ends it now (6.1).
      if (!this.verifier.trusts(held.key)) throw unauthorized();
      call.principal = held.principal;
    } else {
      const verified = await verifyForSocket(this.verifier, token);
      call.principal = verified.principal;
      // The first registration's params.jwt: the socket's token from now on, whatever its binding and params.
      this.connections.adopt(connection, verified);
      this.expiry.watch(client, connection);
    }
    // DESIGN 16: the method's declared capability, before the binding rule and before any SQL.
    const declaration = accessOf(this.reflector, context.getHandler(), context.getClass());
    const decision = decideAccess(call.principal, declaration, { query: undefined, body: call.params });
    if (!decision.allowed) {
      throw forbidden(decision.reason === 'capability' ? capabilitySentence(decision) : decision.detail);
    }
    return true;
  }
}

/** A token a socket will act with, verified: -32001 when it fails, 503 while the token keys are unreachable. */
export async function verifyForSocket(verifier: TokenVerifier, token: string): Promise<VerifiedToken> {
  try {
    return { token, ...(await verifier.verifyKeyed(token)) };
  } catch (error) {
    if (error instanceof KeySourceUnavailableError) throw unavailable('Token keys are unavailable; try again');
    throw unauthorized();
  }
}

export interface RpcAccessOptions extends BindingOptions {
  /** The binding rule of DESIGN 6.3 the method is under (`register`, or `lookup` for discovery). */
  readonly binding?: BindingKind;
}

/**
 * The one declaration of a JSON-RPC method (DESIGN 16): a verified token on the call, its capability
 * (`null`: any verified token, for the unknown method's -32601), then the binding rule when one is named.
 */
export const RpcAccess = (capability: Capability | null, options: RpcAccessOptions = {}): MethodDecorator => {
  const hostRule = options.binding === undefined ? 'own-host' : 'binding';
  const declare = DeclareAccess({ capability, hostRule, hostIn: [] });
  return options.binding === undefined
    ? applyDecorators(declare, UseGuards(RpcTokenGuard))
    : applyDecorators(declare, UseGuards(RpcTokenGuard), Bound(options.binding, options));
};
