import type { ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import type { Principal } from './claims.js';

/** `request.user` is where `@nestjs/passport` puts what the strategy's `validate` returned. */
export type AuthenticatedRequest = FastifyRequest & { user?: Principal };

/**
 * A JSON-RPC call as the controller's adapter hands it to a message handler: its method and params, and,
 * once the token guard verified it, the caller (per call, never per socket: calls on one socket interleave).
 */
export interface RpcCall {
  readonly method: string;
  readonly params: unknown;
  principal?: Principal;
}

/** The verified caller on either transport, set by the token guard that ran before. */
export function principalOfContext(context: ExecutionContext): Principal | undefined {
  if (context.getType() === 'ws') return context.switchToWs().getData<RpcCall>().principal;
  return context.switchToHttp().getRequest<AuthenticatedRequest>().user;
}
