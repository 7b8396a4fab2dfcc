import { HttpStatus, Injectable, Logger, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { accessOf, ProblemException } from '#platform';
import { capabilitySentence, decideAccess, type AccessDecision } from './access-rule.js';
import { BEARER_REALM, bearerCredential } from './bearer.js';
import { loggable } from './binding.js';
import type { Principal } from './claims.js';
import { JwtStrategy } from './jwt.strategy.js';
import { KeySourceUnavailableError } from './keys.js';
import type { AuthenticatedRequest } from './principal-context.js';
import { TokenVerifier } from './token-verifier.js';

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
 * verified in the last minute skips passport (see `TokenVerifier`). Each 403 is one warning line, as a
 * binding rejection is: a refused token is what an operator alerts on.
 */
@Injectable()
export class BearerAuthGuard extends AuthGuard() implements CanActivate {
  private readonly logger = new Logger('Access');

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
    const decision = decideAccess(
      principal,
      accessOf(this.reflector, context.getHandler(), context.getClass()),
      request,
    );
    if (decision.allowed) return true;
    this.logger.warn(refusalLogFields(request, principal, decision), `access refused: ${decision.reason}`);
    throw refusal(decision);
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

/** What a refusal's warning line says: the route and the token's identity, never the token. */
function refusalLogFields(
  request: AuthenticatedRequest,
  principal: Principal,
  decision: Exclude<AccessDecision, { allowed: true }>,
): Record<string, string | null> {
  const claims = principal.claims;
  return {
    endpoint: request.routeOptions.url ?? request.url.split('?')[0] ?? '',
    sub: principal.subject,
    tokenHost: loggable(claims.host),
    tokenSid: loggable(claims.sid),
    tokenEnv: loggable(claims.env),
    required: decision.reason === 'capability' ? decision.capability : null,
    reason: decision.reason,
  };
}

/** The 403 of a refused access decision, problem+json (DESIGN 3, 16). */
export function refusal(decision: Exclude<AccessDecision, { allowed: true }>): ProblemException {
  if (decision.reason === 'capability') {
    return new ProblemException(HttpStatus.FORBIDDEN, capabilitySentence(decision), {
      headers: { 'www-authenticate': `${BEARER_REALM}, error="insufficient_scope", scope="${decision.capability}"` },
    });
  }
  return new ProblemException(HttpStatus.FORBIDDEN, decision.detail);
}
