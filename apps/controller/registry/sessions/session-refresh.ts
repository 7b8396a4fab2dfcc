import { Injectable } from '@nestjs/common';
import { can, TokenVerifier, type Principal } from '#token-binding';
import type { RegistryConnection } from './connection.js';
import { verifyForSocket } from './rpc-token.guard.js';
import { forbidden, refreshMismatch, unauthorized } from '../registry.errors.js';
import type { RefreshResult } from '../runtime-instance.view.js';

/** The claims a refresh token must share with the socket's token (DESIGN 8). */
const BOUND_CLAIMS = ['sid', 'host', 'env'] as const;

type BoundClaim = (typeof BOUND_CLAIMS)[number];

/**
 * `session/refresh` `{ jwt }` (DESIGN 8): a newly verified token whose sid, host and env equal those of the
 * socket's token replaces it, so the socket outlives the old token's expiry.
 */
@Injectable()
export class SessionRefresh {
  constructor(private readonly verifier: TokenVerifier) {}

  /** Throws -32001 (no token on the socket, or `jwt` fails verification) or -32003 (another sid, host or env). */
  async refresh(connection: RegistryConnection, params: unknown): Promise<RefreshResult> {
    const jwt = typeof params === 'object' && params !== null ? (params as { jwt?: unknown }).jwt : undefined;
    if (!connection.authenticated || typeof jwt !== 'string') throw unauthorized();
    const fresh = await verifyForSocket(this.verifier, jwt);
    // The method's declared capability (DESIGN 16), judged on the token that would take over the socket.
    if (!can(fresh.principal, 'registry:register')) throw forbidden('The token lacks the capability registry:register');
    // Read after the verification: a refresh that finished meanwhile is what this one must match.
    const held = connection.principal;
    if (held === undefined) throw unauthorized();
    for (const claim of BOUND_CLAIMS) {
      if (boundValue(fresh.principal, claim) !== boundValue(held, claim)) throw refreshMismatch(claim);
    }
    connection.refresh(fresh);
    return { status: 'refreshed', exp: Number(fresh.principal.claims.exp) };
  }
}

/**
 * A claim as the binding rule reads it (DESIGN 6.2): a trimmed non-blank string, else absent. So a refresh
 * is refused exactly when the new token would be bound to another service, host or environment.
 */
function boundValue(principal: Principal, claim: BoundClaim): string | undefined {
  const value = principal.claims[claim];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}
