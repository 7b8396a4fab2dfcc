import {
  applyDecorators,
  HttpStatus,
  Inject,
  Injectable,
  Logger,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
  type OnModuleInit,
} from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiResponse } from '@nestjs/swagger';
import { PlainTextException, SETTINGS, type Settings } from '#platform';
import { BINDING_MESSAGES, BindingEnforcer, type BindingWarnLogger } from './binding.js';
import { Authenticated, principalOfRequest } from './http-auth.js';

/** Logger context of every binding line (rejections, mismatches allowed by the switch, start-up warning). */
export const BINDING_LOG_CONTEXT = 'TokenBinding';

export const UNENFORCED_BINDING_WARNING =
  'ENFORCE_SID_HOST_MATCH=false: token binding enforcement disabled; sid/host/env mismatches are logged and allowed';

/**
 * The value of one binding query parameter as the rule sees it. A parameter given more than once names
 * several contexts; a value that differs from the token's claim is chosen when there is one, so the
 * request is rejected unless every reading of it is allowed (a repeated identical value then fails
 * validation with 400).
 */
function queryValue(raw: unknown, claim: unknown): string | undefined {
  if (typeof raw === 'string') return raw;
  if (!Array.isArray(raw)) return undefined;
  const values = raw.filter((v): v is string => typeof v === 'string');
  const token = typeof claim === 'string' ? claim.trim() : undefined;
  const differing = values.filter((v) => v.trim() !== token);
  return differing.find((v) => v.trim() !== '') ?? differing[0] ?? values[0];
}

function endpointOf(request: FastifyRequest): string {
  return request.routeOptions.url ?? request.url.split('?')[0] ?? '';
}

/**
 * The binding rule (DESIGN 6.2) for `GET /config-server/{configs,certs,files}`: runs after
 * `BearerAuthGuard`, reads only the verified claims and the `host`, `serviceId` and `envTag` query
 * parameters, and answers a mismatch with a text/plain 403 before anything touches the database.
 */
@Injectable()
export class ConfigBindingGuard implements CanActivate {
  constructor(private readonly enforcer: BindingEnforcer) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    // No principal means the guard runs without BearerAuthGuard: decideBinding fails closed on it.
    const claims = principalOfRequest(request)?.claims;
    const query = (request.query ?? {}) as Readonly<Record<string, unknown>>;
    const decision = this.enforcer.check(endpointOf(request), claims, {
      kind: 'config',
      host: queryValue(query.host, claims?.host),
      serviceId: queryValue(query.serviceId, claims?.sid),
      envTag: queryValue(query.envTag, claims?.env),
    });
    if (!decision.allowed) throw new PlainTextException(HttpStatus.FORBIDDEN, decision.message);
    return true;
  }
}

/** A `BindingWarnLogger` writing through Nest's logger, so lines reach the app's pino stream. */
export function bindingLogger(): BindingWarnLogger {
  const logger = new Logger(BINDING_LOG_CONTEXT);
  return { warn: (fields, message) => logger.warn(fields, message) };
}

/**
 * A valid token with `scope`, then the config binding rule: the guard order is 401, 403 scope, 403
 * binding, and only then validation and the handler.
 */
export const AuthenticatedConfigRequest = (scope: string): MethodDecorator & ClassDecorator =>
  applyDecorators(
    Authenticated(scope),
    UseGuards(ConfigBindingGuard),
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

/** Logs the start-up warning of DESIGN 6.4 when `ENFORCE_SID_HOST_MATCH=false`; returns whether it did. */
export function warnIfBindingUnenforced(settings: Settings, logger: BindingWarnLogger = bindingLogger()): boolean {
  if (settings.enforceSidHostMatch) return false;
  logger.warn(
    { enforceSidHostMatch: false, allowUnenforcedBinding: settings.allowUnenforcedBinding },
    UNENFORCED_BINDING_WARNING,
  );
  return true;
}

/** Provider that logs the start-up warning once when its module initialises. */
@Injectable()
export class UnenforcedBindingWarning implements OnModuleInit {
  constructor(@Inject(SETTINGS) private readonly settings: Settings) {}

  onModuleInit(): void {
    warnIfBindingUnenforced(this.settings);
  }
}
