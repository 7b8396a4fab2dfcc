/**
 * The binding rule (DESIGN 6.2, 6.3): a verified token is bound to a host, a service id and an
 * environment. One pure function decides it for the config server and for the controller.
 */

/**
 * What a call asks for, as it arrived: request values are `unknown` because the rule runs before
 * validation, so it must decide every shape itself (a value it cannot compare is refused, never skipped).
 */
export type BindingRequest =
  | {
      /** `GET /config-server/{configs,certs,files}`. */
      readonly kind: 'config';
      readonly host: unknown;
      readonly serviceId: unknown;
      readonly envTag: unknown;
    }
  | {
      /** `service/register` on the controller; the host is the controller's own, never the message's. */
      readonly kind: 'register';
      readonly controllerHostId: string;
      readonly serviceId: unknown;
      readonly envTag: unknown;
    }
  | {
      /** `discovery/*` on the controller: only the host part applies (a runtime looks up other services). */
      readonly kind: 'lookup';
      readonly controllerHostId: string;
    };

/** Where a binding rule applies; `@BindingRule(kind)` names it on a route or message handler. */
export type BindingKind = BindingRequest['kind'];

export type BindingReason = 'claims' | 'host' | 'sid' | 'env';

export type BindingDecision =
  { readonly allowed: true } | { readonly allowed: false; readonly reason: BindingReason; readonly message: string };

export const BINDING_MESSAGES = {
  claims: 'No verified token claims',
  configHost: 'Token host does not match requested host',
  controllerHost: 'Token host does not match controller hostId',
  sid: 'Token sid does not match requested serviceId',
  env: 'Token env does not match requested envTag',
} as const;

type Claims = Readonly<Record<string, unknown>>;

/** A claim that is not a non-blank string counts as missing; surrounding whitespace is ignored. */
function claim(claims: Claims, name: 'host' | 'sid' | 'env'): string | undefined {
  const value = claims[name];
  if (typeof value !== 'string') return undefined;
  const trimmed = value.trim();
  return trimmed === '' ? undefined : trimmed;
}

/** A request value: absent (undefined, null or blank), a trimmed string, or something no claim can equal. */
type Requested =
  { readonly kind: 'absent' } | { readonly kind: 'value'; readonly value: string } | { readonly kind: 'invalid' };

const ABSENT: Requested = { kind: 'absent' };
const INVALID: Requested = { kind: 'invalid' };

function requested(value: unknown): Requested {
  if (value === undefined || value === null) return ABSENT;
  if (typeof value !== 'string') return INVALID;
  const trimmed = value.trim();
  return trimmed === '' ? ABSENT : { kind: 'value', value: trimmed };
}

/** A rule that always applies: the token must carry the claim and it must equal a present request value. */
const required = (token: string | undefined, wanted: Requested): boolean =>
  token !== undefined && wanted.kind === 'value' && token === wanted.value;

/** A rule that applies only when the request names the value (DESIGN 6.2 rules 2-3, 6.3 rule 3). */
const whenNamed = (token: string | undefined, wanted: Requested): boolean =>
  wanted.kind === 'absent' || required(token, wanted);

const deny = (reason: BindingReason, message: string): BindingDecision => ({ allowed: false, reason, message });
const ALLOW: BindingDecision = { allowed: true };

/**
 * Decides whether verified `claims` may act on `request`. `sub` never stands in for `sid` or `host`, and
 * nothing but the claims and the request's own parameters is read. Missing claims deny (fail closed).
 */
export function decideBinding(claims: Claims | undefined, request: BindingRequest): BindingDecision {
  if (claims === undefined || claims === null || typeof claims !== 'object') {
    return deny('claims', BINDING_MESSAGES.claims);
  }
  const host = claim(claims, 'host');
  if (request.kind === 'lookup') {
    return required(host, requested(request.controllerHostId)) ? ALLOW : deny('host', BINDING_MESSAGES.controllerHost);
  }
  const sidOk = (rule: typeof required) => rule(claim(claims, 'sid'), requested(request.serviceId));
  const envOk = whenNamed(claim(claims, 'env'), requested(request.envTag));
  if (request.kind === 'config') {
    if (!required(host, requested(request.host))) return deny('host', BINDING_MESSAGES.configHost);
    if (!sidOk(whenNamed)) return deny('sid', BINDING_MESSAGES.sid);
    return envOk ? ALLOW : deny('env', BINDING_MESSAGES.env);
  }
  // A registration always names its service: rules 1 and 2 run whatever else the params hold (6.3 rule 5).
  if (!sidOk(required)) return deny('sid', BINDING_MESSAGES.sid);
  if (!required(host, requested(request.controllerHostId))) return deny('host', BINDING_MESSAGES.controllerHost);
  return envOk ? ALLOW : deny('env', BINDING_MESSAGES.env);
}

/**
 * The environment a registration is stored under (DESIGN 6.3 rule 5): the requested one, else the token's,
 * so an environment-bound runtime never registers outside its environment.
 */
export function registeredEnv(claims: Claims, envTag: string | undefined): string | undefined {
  return envTag ?? claim(claims, 'env');
}

/** The fields of a rejection's warning line (DESIGN 6.2): never the token, never other claims. */
export interface BindingLogFields {
  readonly endpoint: string;
  readonly requestedServiceId: string | null;
  readonly tokenSid: string | null;
  readonly requestedHost: string | null;
  readonly tokenHost: string | null;
  readonly envTag: string | null;
  readonly tokenEnv: string | null;
  readonly reason: BindingReason;
}

/** A claim or parameter as a log field: strings only, at most 256 characters. */
export function loggable(value: unknown): string | null {
  return typeof value === 'string' ? value.slice(0, 256) : null;
}

export function bindingLogFields(
  endpoint: string,
  claims: Claims | undefined,
  request: BindingRequest,
  reason: BindingReason,
): BindingLogFields {
  return {
    endpoint,
    requestedServiceId: loggable(request.kind === 'lookup' ? undefined : request.serviceId),
    tokenSid: loggable(claims?.sid),
    requestedHost: loggable(request.kind === 'config' ? request.host : request.controllerHostId),
    tokenHost: loggable(claims?.host),
    envTag: loggable(request.kind === 'lookup' ? undefined : request.envTag),
    tokenEnv: loggable(claims?.env),
    reason,
  };
}

export interface BindingWarnLogger {
  warn(fields: object, message: string): void;
}

/**
 * Applies the rule with the `ENFORCE_SID_HOST_MATCH` switch (DESIGN 6.4) and logs each mismatch once.
 * With enforcement off a mismatch is still logged, with the words `enforcement disabled`, and allowed.
 */
export class BindingEnforcer {
  constructor(
    private readonly enforce: boolean,
    private readonly logger: BindingWarnLogger,
    private readonly onRejection: (reason: BindingReason, endpoint: string) => void = () => {},
  ) {}

  check(endpoint: string, claims: Claims | undefined, request: BindingRequest): BindingDecision {
    const decision = decideBinding(claims, request);
    if (decision.allowed) return decision;
    const fields = bindingLogFields(endpoint, claims, request, decision.reason);
    if (!this.enforce && decision.reason !== 'claims') {
      this.logger.warn(fields, `token binding mismatch (enforcement disabled): ${decision.message}`);
      return ALLOW;
    }
    this.onRejection(decision.reason, endpoint);
    this.logger.warn(fields, `token binding rejected: ${decision.message}`);
    return decision;
  }
}
