import {
  applyDecorators,
  createParamDecorator,
  HttpStatus,
  SetMetadata,
  UseGuards,
  type ExecutionContext,
} from '@nestjs/common';
import { ApiBearerAuth, ApiResponse } from '@nestjs/swagger';
import { BEARER_SCHEME, ControlCharsGuard, ProblemException, problemResponse } from '#platform';
import { BearerAuthGuard, REQUIRED_SCOPE } from './bearer-auth.guard.js';
import { BINDING_MESSAGES, type BindingKind } from './binding.js';
import type { Principal } from './claims.js';
import { principalOfContext } from './principal-context.js';
import { BindingRule, TokenBindingGuard, type BindingOptions } from './token-binding.guard.js';

/** The decorators routes and message handlers use: who may call (token, scope) and under which binding rule. */

/** The OpenAPI description of a route that needs a token with `scope`. */
const tokenDocs = (scope: string): MethodDecorator & ClassDecorator =>
  applyDecorators(
    ApiBearerAuth(BEARER_SCHEME),
    ApiResponse(problemResponse(401, 'Missing or invalid bearer token (WWW-Authenticate: Bearer realm="bindery")')),
    ApiResponse(problemResponse(403, `Authenticated but not allowed (needs scope ${scope}, or another host's data)`)),
  );

/**
 * Requires a valid bearer token carrying `scope` (admin implies write implies read). The input check
 * (`ControlCharsGuard`, a 400) runs last, after the 401 and 403 (DESIGN 3).
 */
export const Authenticated = (scope: string): MethodDecorator & ClassDecorator =>
  applyDecorators(SetMetadata(REQUIRED_SCOPE, scope), UseGuards(BearerAuthGuard, ControlCharsGuard), tokenDocs(scope));

/** The verified caller; only valid on routes behind `@Authenticated`. */
export const CurrentPrincipal = createParamDecorator((_: unknown, context: ExecutionContext): Principal => {
  const principal = principalOfContext(context);
  // A route without the guard is a wiring fault: fail closed rather than act for nobody.
  if (principal === undefined) throw new ProblemException(HttpStatus.FORBIDDEN, 'No verified token');
  return principal;
});

/** `@BindingRule(kind)` applied by `TokenBindingGuard`; put it after the guard that verifies the token. */
export const Bound = (kind: BindingKind, options: BindingOptions = {}): MethodDecorator & ClassDecorator =>
  applyDecorators(BindingRule(kind, options), UseGuards(TokenBindingGuard));

/**
 * A valid token with `scope`, then the config binding rule: the guard order is 401, 403 scope, 403
 * binding, and only then validation and the handler.
 */
export const AuthenticatedConfigRequest = (scope: string): MethodDecorator & ClassDecorator =>
  applyDecorators(
    SetMetadata(REQUIRED_SCOPE, scope),
    BindingRule('config'),
    UseGuards(BearerAuthGuard, TokenBindingGuard, ControlCharsGuard),
    tokenDocs(scope),
    ApiResponse({
      status: 403,
      description: `Missing scope ${scope} (problem+json), or the token's host/sid/env do not match the query (text/plain)`,
      content: {
        'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
        'text/plain': {
          schema: {
            type: 'string',
            enum: [BINDING_MESSAGES.configHost, BINDING_MESSAGES.sid, BINDING_MESSAGES.env],
          },
        },
      },
    }),
  );
