import { HttpStatus, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { accessOf, ProblemException, type AccessDeclaration } from '#platform';
import { capabilitySentence, decideAccess, type AccessDecision } from './access-rule.js';
import { BEARER_REALM, bearerCredential } from './bearer.js';
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
    const decision = decideAccess(principal, this.declarationOf(context), request);
    if (!decision.allowed) throw refusal(decision);
    return true;
  }

  // Metadata never changes once the app runs: read once per class and handler (a subclass may inherit one).
  private readonly declarations = new WeakMap<object, Map<object, AccessDeclaration | undefined>>();

  private declarationOf(context: ExecutionContext): AccessDeclaration | undefined {
    const handler = context.getHandler();
    const owner = context.getClass();
    let byHandler = this.declarations.get(owner);
    if (byHandler === undefined)
      this.declarations.set(owner, (byHandler = new Map<object, AccessDeclaration | undefined>()));
    if (!byHandler.has(handler)) byHandler.set(handler, accessOf(this.reflector, handler, owner));
    return byHandler.get(handler);
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

/** The 403 of a refused access decision, problem+json (DESIGN 3, 16). */
export function refusal(decision: Exclude<AccessDecision, { allowed: true }>): ProblemException {
  if (decision.reason === 'capability') {
    return new ProblemException(HttpStatus.FORBIDDEN, capabilitySentence(decision), {
      headers: { 'www-authenticate': `${BEARER_REALM}, error="insufficient_scope", scope="${decision.capability}"` },
    });
  }
  return new ProblemException(HttpStatus.FORBIDDEN, decision.detail);
}
