import {
  applyDecorators,
  createParamDecorator,
  HttpStatus,
  Injectable,
  SetMetadata,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { ApiBearerAuth, ApiResponse } from '@nestjs/swagger';
import { BEARER_SCHEME, ProblemException, problemResponse } from '#platform';
import { hasScope, type Principal } from './claims.js';
import { KeySourceUnavailableError } from './keys.js';
import { bearerToken, TokenVerifier } from './token-verifier.js';

const REQUIRED_SCOPE = Symbol('requiredScope');
const PRINCIPAL = Symbol('principal');

type AuthenticatedRequest = FastifyRequest & { [PRINCIPAL]?: Principal };

const REALM = 'Bearer realm="bindery"';

function unauthorized(tokenSent: boolean): ProblemException {
  return new ProblemException(
    HttpStatus.UNAUTHORIZED,
    tokenSent ? 'The bearer token is not valid' : 'A bearer token is required',
    { headers: { 'www-authenticate': tokenSent ? `${REALM}, error="invalid_token"` : REALM } },
  );
}

/** Verifies the bearer token and the route's scope before the handler (and so any SQL) runs. */
@Injectable()
export class BearerAuthGuard implements CanActivate {
  constructor(
    private readonly verifier: TokenVerifier,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const token = bearerToken(request.headers.authorization);
    if (token === undefined) throw unauthorized(false);
    let principal: Principal;
    try {
      principal = await this.verifier.verify(token);
    } catch (error) {
      if (error instanceof KeySourceUnavailableError) {
        throw new ProblemException(HttpStatus.SERVICE_UNAVAILABLE, 'Token keys are unavailable; try again');
      }
      throw unauthorized(true);
    }
    const scope = this.reflector.getAllAndOverride<string | undefined>(REQUIRED_SCOPE, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (scope !== undefined && !hasScope(principal, scope)) {
      throw new ProblemException(HttpStatus.FORBIDDEN, `The token lacks the scope ${scope}`, {
        headers: { 'www-authenticate': `${REALM}, error="insufficient_scope", scope="${scope}"` },
      });
    }
    request[PRINCIPAL] = principal;
    return true;
  }
}

/** Requires a valid bearer token carrying `scope` (admin implies write implies read). */
export const Authenticated = (scope: string): MethodDecorator & ClassDecorator =>
  applyDecorators(
    SetMetadata(REQUIRED_SCOPE, scope),
    UseGuards(BearerAuthGuard),
    ApiBearerAuth(BEARER_SCHEME),
    ApiResponse(problemResponse(401, 'Missing or invalid bearer token (WWW-Authenticate: Bearer realm="bindery")')),
    ApiResponse(problemResponse(403, `Authenticated but not allowed (needs scope ${scope}, or another host's data)`)),
  );

/** The verified caller; only valid on routes behind `@Authenticated`. */
export const CurrentPrincipal = createParamDecorator((_: unknown, context: ExecutionContext): Principal => {
  const principal = context.switchToHttp().getRequest<AuthenticatedRequest>()[PRINCIPAL];
  // A route without the guard is a wiring fault: fail closed rather than act for nobody.
  if (principal === undefined) throw new ProblemException(HttpStatus.FORBIDDEN, 'No verified token');
  return principal;
});

/** The verified caller set by `BearerAuthGuard`, for later guards such as the binding guard. */
export function principalOfRequest(request: FastifyRequest): Principal | undefined {
  return (request as AuthenticatedRequest)[PRINCIPAL];
}
