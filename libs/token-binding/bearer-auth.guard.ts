import { HttpStatus, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { ProblemException } from '#platform';
import { BEARER_REALM, bearerCredential } from './bearer.js';
import { hasScope, type Principal } from './claims.js';
import { JwtStrategy } from './jwt.strategy.js';
import { KeySourceUnavailableError } from './keys.js';
import type { AuthenticatedRequest } from './principal-context.js';
import { TokenVerifier } from './token-verifier.js';

/** Metadata key of the scope a route needs; `@Authenticated(scope)` sets it. */
export const REQUIRED_SCOPE = Symbol('requiredScope');

function unauthorized(tokenSent: boolean): ProblemException {
  return new ProblemException(
    HttpStatus.UNAUTHORIZED,
    tokenSent ? 'The bearer token is not valid' : 'A bearer token is required',
    { headers: { 'www-authenticate': tokenSent ? `${BEARER_REALM}, error="invalid_token"` : BEARER_REALM } },
  );
}

/**
 * `AuthGuard` of `@nestjs/passport` with Bindery's answers: 401 with the RFC 6750 challenge, 503 when the
 * key source is down, 403 `insufficient_scope`; all before the handler (and so any SQL) runs. A token
 * verified in the last minute skips passport (see `TokenVerifier`).
 */
@Injectable()
export class BearerAuthGuard extends AuthGuard() implements CanActivate {
  constructor(
    private readonly verifier: TokenVerifier,
    private readonly reflector: Reflector,
    strategy: JwtStrategy,
  ) {
    super({ defaultStrategy: strategy.name, session: false });
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const credential = bearerCredential(request.headers.authorization);
    if (credential.kind !== 'token') throw unauthorized(credential.kind === 'malformed');
    const known = this.verifier.remembered(credential.token);
    if (known !== undefined) request.user = known;
    else await super.canActivate(context);
    const principal = request.user as Principal;
    const scope = this.reflector.getAllAndOverride<string | undefined>(REQUIRED_SCOPE, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (scope !== undefined && !hasScope(principal, scope)) {
      throw new ProblemException(HttpStatus.FORBIDDEN, `The token lacks the scope ${scope}`, {
        headers: { 'www-authenticate': `${BEARER_REALM}, error="insufficient_scope", scope="${scope}"` },
      });
    }
    return true;
  }

  // passport reports a refused token as `info` (a failure), a thrown one as `error`.
  override handleRequest<T = Principal>(error: unknown, user: T | false, info: unknown): T {
    if (error instanceof KeySourceUnavailableError || info instanceof KeySourceUnavailableError) {
      throw new ProblemException(HttpStatus.SERVICE_UNAVAILABLE, 'Token keys are unavailable; try again');
    }
    if (error instanceof Error) throw error;
    if (user === false || user === null || user === undefined) throw unauthorized(true);
    return user;
  }
}
