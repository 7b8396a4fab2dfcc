import {
  applyDecorators,
  HttpStatus,
  Inject,
  Injectable,
  SetMetadata,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { badRequest, PlainTextException, SETTINGS, type Settings } from '#platform';
import { BindingEnforcer, type BindingKind, type BindingRequest } from './binding.js';
import { principalOfContext, type RpcCall } from './principal-context.js';

/**
 * A binding query parameter given more than once names several contexts: 400, decided here, before the
 * binding and before any database access (DESIGN 3).
 */
function singleQueryValue(query: Readonly<Record<string, unknown>>, name: string): unknown {
  const raw = query[name];
  if (Array.isArray(raw))
    throw badRequest(`${name} must not be repeated`, [{ field: name, message: `${name} must not be repeated` }]);
  return raw;
}

const BINDING_RULE = Symbol('bindingRule');
const CLOSES_SOCKET = Symbol('bindingClosesSocket');

export interface BindingOptions {
  /**
   * WebSocket handlers that set up lasting state on the socket (a registration, a subscription): a
   * mismatch closes the socket with 1008 after the -32003 answer (DESIGN 8). One-off calls keep it open.
   */
  readonly closesSocket?: boolean;
}

/** Names the binding rule a route or message handler is under; `TokenBindingGuard` applies it. */
export const BindingRule = (kind: BindingKind, options: BindingOptions = {}): MethodDecorator & ClassDecorator =>
  applyDecorators(SetMetadata(BINDING_RULE, kind), SetMetadata(CLOSES_SOCKET, options.closesSocket === true));

/** A binding mismatch on the WebSocket transport; the JSON-RPC adapter answers it with -32003. */
export class BindingRejectedError extends Error {
  constructor(
    readonly kind: BindingKind,
    readonly sentence: string,
    /** The handler declared `closesSocket`: the adapter closes the socket with 1008 after the answer. */
    readonly closesConnection: boolean,
  ) {
    super(sentence);
    this.name = 'BindingRejectedError';
  }
}

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The binding rule (DESIGN 6.2, 6.3, 8) on both transports, over the one pure `decideBinding`: it reads the
 * verified claims (set by `BearerAuthGuard` or the controller's token guard) and the request context, the
 * HTTP query (`host`, `serviceId`, `envTag`) or the JSON-RPC params plus the controller's own host id, and
 * refuses a mismatch before anything touches the database: a text/plain 403, or -32003 over JSON-RPC.
 */
@Injectable()
export class TokenBindingGuard implements CanActivate {
  constructor(
    private readonly enforcer: BindingEnforcer,
    private readonly reflector: Reflector,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const { kind, closes } = this.ruleOf(context);
    // A guard without a rule is a wiring fault: fail closed.
    if (kind === undefined) throw new Error('TokenBindingGuard needs @BindingRule on the handler');
    // No principal means the guard runs without a token guard: decideBinding fails closed on it.
    const claims = principalOfContext(context)?.claims;
    const ws = context.getType() === 'ws';
    // Every call is decided here, whatever its params hold: the guard never defers to validation (6.3 rule 5).
    const target = ws ? this.rpcTarget(kind, context) : this.httpTarget(kind, context);
    const decision = this.enforcer.check(target.endpoint, claims, target.request);
    if (decision.allowed) return true;
    if (ws) throw new BindingRejectedError(kind, decision.message, closes);
    throw new PlainTextException(HttpStatus.FORBIDDEN, decision.message);
  }

  private ruleOf(context: ExecutionContext): Rule {
    const targets = [context.getHandler(), context.getClass()];
    return {
      kind: this.reflector.getAllAndOverride<BindingKind | undefined>(BINDING_RULE, targets),
      closes: this.reflector.getAllAndOverride<boolean | undefined>(CLOSES_SOCKET, targets) === true,
    };
  }

  private httpTarget(kind: BindingKind, context: ExecutionContext): Target {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const endpoint = request.routeOptions.url ?? request.url.split('?')[0] ?? '';
    if (kind !== 'config') throw new Error(`binding rule ${kind} has no HTTP form`);
    const query = (request.query ?? {}) as Readonly<Record<string, unknown>>;
    const host = singleQueryValue(query, 'host');
    const serviceId = singleQueryValue(query, 'serviceId');
    const envTag = singleQueryValue(query, 'envTag');
    return { endpoint, request: { kind, host, serviceId, envTag } };
  }

  private rpcTarget(kind: BindingKind, context: ExecutionContext): Target {
    const call = context.switchToWs().getData<RpcCall>();
    const controllerHostId = this.settings.controllerHostId;
    if (kind === 'lookup') return { endpoint: call.method, request: { kind, controllerHostId } };
    if (kind !== 'register') throw new Error(`binding rule ${kind} has no JSON-RPC form`);
    const params = isRecord(call.params) ? call.params : {};
    return {
      endpoint: call.method,
      request: { kind, controllerHostId, serviceId: params.serviceId, envTag: params.envTag },
    };
  }
}

interface Rule {
  readonly kind: BindingKind | undefined;
  readonly closes: boolean;
}

interface Target {
  readonly endpoint: string;
  readonly request: BindingRequest;
}
