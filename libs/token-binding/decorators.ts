import { applyDecorators, createParamDecorator, HttpStatus, UseGuards, type ExecutionContext } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse } from '@nestjs/swagger';
import {
  BEARER_SCHEME,
  ControlCharsGuard,
  DeclareAccess,
  ProblemException,
  problemResponse,
  type Capability,
  type HostLocation,
} from '#platform';
import { BearerAuthGuard } from './bearer-auth.guard.js';
import { BINDING_MESSAGES, type BindingKind } from './binding.js';
import type { Principal } from './claims.js';
import { principalOfContext } from './principal-context.js';
import { BindingRule, TokenBindingGuard, type BindingOptions } from './token-binding.guard.js';

/** The decorators routes and message handlers use: who may call (token, scope) and under which binding rule. */

/** The OpenAPI description of a route that needs a token with `capability`. */
const tokenDocs = (capability: Capability): MethodDecorator & ClassDecorator =>
  applyDecorators(
    ApiBearerAuth(BEARER_SCHEME),
    ApiResponse(problemResponse(401, 'Missing or invalid bearer token (WWW-Authenticate: Bearer realm="bindery")')),
    ApiResponse(
      problemResponse(403, `Authenticated but not allowed (needs capability ${capability}, or another host's data)`),
    ),
  );

export interface AccessOptions {
  /** Request values that name a host: another host's is 403 before any SQL (DESIGN 16). */
  readonly hostIn?: readonly HostLocation[];
}

/**
 * The one declaration of an HTTP route (DESIGN 16): the capability it needs and its host rule, applied by
 * `BearerAuthGuard` (401, then 403) before the input check (`ControlCharsGuard`, a 400) and the handler.
 */
export const Access = (
  capability: Capability,
  hostRule: 'own-host' | 'global-admin',
  options: AccessOptions = {},
): MethodDecorator & ClassDecorator =>
  applyDecorators(
    DeclareAccess({ capability, hostRule, hostIn: options.hostIn ?? [] }),
    UseGuards(BearerAuthGuard, ControlCharsGuard),
    tokenDocs(capability),
  );

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
 * A config-server read (DESIGN 6.2, 16): a valid token with `capability`, then the binding rule; the guard
 * order is 401, 403 capability, 403 binding, and only then validation and the handler.
 */
export const BoundAccess = (capability: Capability): MethodDecorator & ClassDecorator =>
  applyDecorators(
    DeclareAccess({ capability, hostRule: 'binding', hostIn: [] }),
    BindingRule('config'),
    UseGuards(BearerAuthGuard, TokenBindingGuard, ControlCharsGuard),
    tokenDocs(capability),
    ApiResponse({
      status: 403,
      description: `Missing capability ${capability} (problem+json), or the token's host/sid/env do not match the query (text/plain)`,
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
