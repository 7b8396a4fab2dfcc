import type { KeyObject } from 'node:crypto';
import {
  applyDecorators,
  createParamDecorator,
  HttpStatus,
  Injectable,
  SetMetadata,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { AuthGuard, PassportStrategy } from '@nestjs/passport';
import type { JWTPayload } from 'jose';
import passport from 'passport';
import { Strategy, type SecretOrKeyProvider } from 'passport-jwt';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { ApiBearerAuth, ApiResponse } from '@nestjs/swagger';
import { BEARER_SCHEME, ProblemException, problemResponse } from '#platform';
import { hasScope, type Principal } from './claims.js';
import { KeySourceUnavailableError } from './keys.js';
import { bearerCredential, bearerToken, TokenVerifier } from './token-verifier.js';

const REQUIRED_SCOPE = Symbol('requiredScope');

/** `request.user` is where `@nestjs/passport` puts what the strategy's `validate` returned. */
type AuthenticatedRequest = FastifyRequest & { user?: Principal };

const REALM = 'Bearer realm="bindery"';

function unauthorized(tokenSent: boolean): ProblemException {
  return new ProblemException(
    HttpStatus.UNAUTHORIZED,
    tokenSent ? 'The bearer token is not valid' : 'A bearer token is required',
    { headers: { 'www-authenticate': tokenSent ? `${REALM}, error="invalid_token"` : REALM } },
  );
}

// Each app instance registers its own strategy name: passport's registry is process-global, and tests (or
// an embedding process) may run several apps with different key settings side by side.
let strategies = 0;

/**
 * passport-jwt over the one `TokenVerifier`: its key provider (pre-screen, then the key parsed once and
 * chosen by `kid`) and its jsonwebtoken options, so HTTP and WebSocket accept exactly the same tokens.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy) implements OnApplicationShutdown {
  override readonly name: string;

  constructor(private readonly verifier: TokenVerifier) {
    const { issuer, audience } = verifier.policy;
    super({
      jwtFromRequest: (request: FastifyRequest) => bearerToken(request.headers.authorization) ?? null,
      secretOrKeyProvider: ((_request: unknown, raw: string, done: (error: unknown, key?: KeyObject) => void) => {
        verifier.keyFor(raw).then(
          (key) => done(null, key),
          (error: unknown) => done(error),
        );
      }) as SecretOrKeyProvider,
      issuer,
      audience,
      algorithms: verifier.options.algorithms,
      // passport-jwt lets its top-level issuer/audience/algorithms win; they are the same values.
      jsonWebTokenOptions: verifier.options,
      passReqToCallback: true,
    });
    this.name = `bindery-jwt-${++strategies}`;
    passport.use(this.name, this);
  }

  validate(request: FastifyRequest, payload: JWTPayload): Principal {
    return this.verifier.accept(bearerToken(request.headers.authorization) as string, payload);
  }

  // After the HTTP server closed: requests still in flight during shutdown need the strategy.
  onApplicationShutdown(): void {
    passport.unuse(this.name);
  }
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
    const token = credential.token;
    const known = this.verifier.remembered(token);
    if (known !== undefined) request.user = known;
    else await super.canActivate(context);
    const principal = request.user as Principal;
    const scope = this.reflector.getAllAndOverride<string | undefined>(REQUIRED_SCOPE, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (scope !== undefined && !hasScope(principal, scope)) {
      throw new ProblemException(HttpStatus.FORBIDDEN, `The token lacks the scope ${scope}`, {
        headers: { 'www-authenticate': `${REALM}, error="insufficient_scope", scope="${scope}"` },
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

/** Requires a valid bearer token carrying `scope` (admin implies write implies read). */
export const Authenticated = (scope: string): MethodDecorator & ClassDecorator =>
  applyDecorators(
    SetMetadata(REQUIRED_SCOPE, scope),
    UseGuards(BearerAuthGuard),
    ApiBearerAuth(BEARER_SCHEME),
    ApiResponse(problemResponse(401, 'Missing or invalid bearer token (WWW-Authenticate: Bearer realm="bindery")')),
    ApiResponse(problemResponse(403, `Authenticated but not allowed (needs scope ${scope}, or another host's data)`)),
  );

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

/** The verified caller; only valid on routes behind `@Authenticated`. */
export const CurrentPrincipal = createParamDecorator((_: unknown, context: ExecutionContext): Principal => {
  const principal = principalOfContext(context);
  // A route without the guard is a wiring fault: fail closed rather than act for nobody.
  if (principal === undefined) throw new ProblemException(HttpStatus.FORBIDDEN, 'No verified token');
  return principal;
});
