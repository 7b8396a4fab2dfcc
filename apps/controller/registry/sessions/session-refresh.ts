import { Injectable } from '@nestjs/common';
import { can, KeySourceUnavailableError, TokenVerifier, type Principal } from '#token-binding';
import type { RegistryConnection, VerifiedToken } from './connection.js';
import { forbidden, refreshMismatch, unauthorized, unavailable } from '../registry.errors.js';
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
    const fresh = await this.verify(jwt);
    // The method's declared capability (DESIGN 16), judged on the token that would take over the socket.
    if (!can(fresh.principal, 'registry:register')) throw forbidden('The token lacks the capability registry:register');
    // Read after the verification: a refresh that finished meanwhile is what this one must match.
    const held = connection.principal;
    if (held === undefined) throw unauthorized();
    for (const claim of BOUND_CLAIMS) {
      if (boundValue(fresh.principal, claim) !== boundValue(held, claim)) throw refreshMismatch(claim);
    }
    connection.refresh({ token: jwt, principal: fresh.principal, key: fresh.key });
    return { status: 'refreshed', exp: Number(fresh.principal.claims.exp) };
  }

  private async verify(jwt: string): Promise<Omit<VerifiedToken, 'token'>> {
    try {
      return await this.verifier.verifyKeyed(jwt);
    } catch (error) {
      if (error instanceof KeySourceUnavailableError) throw unavailable('Token keys are unavailable; try again');
      throw unauthorized();
    }
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
