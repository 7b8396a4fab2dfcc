import fc from 'fast-check';

/**
 * The input space of the binding rule (DESIGN 6.2, 6.3) for property-based tests: claim and request values
 * described by a shape, made concrete against a target value at run time (each case has its own service
 * id), plus the rule itself written from the contract as a model the running processes are compared with.
 */

/** Whitespace JavaScript's `trim()` removes, of every kind (DESIGN: "both sides are trimmed"). */
export const TRIMMED_SPACE = [' ', '\t', '\n', '\r', '\v', '\f', '\u00a0', '\u2003', '\u2028', '\u3000', '\ufeff'];
/** Invisible characters `trim()` keeps: a value carrying one is another value. */
export const ZERO_WIDTH = ['\u200b', '\u200c', '\u200d', '\u2060'];
/** Latin letters and their Cyrillic look-alikes. */
const LOOK_ALIKES: Readonly<Record<string, string>> = {
  a: '\u0430',
  e: '\u0435',
  o: '\u043e',
  c: '\u0441',
  p: '\u0440',
};

/** How a claim or a request value relates to the case's target value. */
export type Shape =
  | { readonly kind: 'absent' }
  | { readonly kind: 'exact' }
  | { readonly kind: 'padded'; readonly left: string; readonly right: string }
  | { readonly kind: 'zeroWidth'; readonly char: string; readonly at: 'start' | 'end' | 'inside' }
  | { readonly kind: 'upper' }
  | { readonly kind: 'lookAlike' }
  | { readonly kind: 'other' }
  | { readonly kind: 'blank'; readonly text: string }
  | { readonly kind: 'long' }
  | { readonly kind: 'json'; readonly value: null | number | boolean | 'array' | 'object' };

const space = fc.string({ unit: fc.constantFrom(...TRIMMED_SPACE), minLength: 0, maxLength: 3 });

/** Every shape; `json` ones (null, numbers, arrays, objects) only where the transport can carry them. */
export function shapes(options: { json: boolean }): fc.Arbitrary<Shape> {
  const common: fc.Arbitrary<Shape>[] = [
    fc.constant({ kind: 'absent' } as const),
    fc.constant({ kind: 'exact' } as const),
    fc.record({ kind: fc.constant('padded' as const), left: space, right: space }),
    fc.record({
      kind: fc.constant('zeroWidth' as const),
      char: fc.constantFrom(...ZERO_WIDTH),
      at: fc.constantFrom('start' as const, 'end' as const, 'inside' as const),
    }),
    fc.constant({ kind: 'upper' } as const),
    fc.constant({ kind: 'lookAlike' } as const),
    fc.constant({ kind: 'other' } as const),
    fc.record({
      kind: fc.constant('blank' as const),
      text: fc.string({ unit: fc.constantFrom(...TRIMMED_SPACE), minLength: 0, maxLength: 4 }),
    }),
    fc.constant({ kind: 'long' } as const),
  ];
  if (!options.json) return fc.oneof(...common);
  const json = fc.record({
    kind: fc.constant('json' as const),
    value: fc.oneof(
      fc.constant(null),
      fc.integer(),
      fc.boolean(),
      fc.constant('array' as const),
      fc.constant('object' as const),
    ),
  });
  // Weighted so matching values (the interesting boundary) come up often next to every kind of miss.
  return fc.oneof({ arbitrary: fc.constant({ kind: 'exact' } as const), weight: 4 }, ...common, json);
}

/** The concrete value of `shape` for a case whose right value is `target`; undefined means "left out". */
export function materialize(shape: Shape, target: string): unknown {
  switch (shape.kind) {
    case 'absent':
      return undefined;
    case 'exact':
      return target;
    case 'padded':
      return `${shape.left}${target}${shape.right}`;
    case 'zeroWidth':
      if (shape.at === 'start') return `${shape.char}${target}`;
      if (shape.at === 'end') return `${target}${shape.char}`;
      return `${target.slice(0, 1)}${shape.char}${target.slice(1)}`;
    case 'upper':
      return target.toUpperCase();
    case 'lookAlike':
      return target.replace(/[aeocp]/, (letter) => LOOK_ALIKES[letter] ?? letter);
    case 'other':
      return `${target}-other`;
    case 'blank':
      return shape.text;
    case 'long':
      // Equal on both sides when both are long, and over every length limit (255).
      return target.padEnd(300, 'x');
    case 'json':
      if (shape.value === 'array') return [target];
      if (shape.value === 'object') return { value: target };
      return shape.value;
  }
}

/** A claims object with each named claim set, or left out when its value is undefined. */
export function claimsOf(values: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined));
}

// ---- The rule, as the contract states it (a model, deliberately not the product's code) ----

export type Reason = 'host' | 'sid' | 'env';

/** DESIGN 6.2: "a claim that is not a string counts as missing"; blank counts as missing; trimmed. */
function claimText(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** A request value: omitted, null or blank is absent; anything but a string is invalid; text is trimmed. */
type RequestText =
  { readonly kind: 'absent' } | { readonly kind: 'invalid' } | { readonly kind: 'text'; readonly text: string };

function requestText(value: unknown): RequestText {
  if (value === undefined || value === null) return { kind: 'absent' };
  if (typeof value !== 'string') return { kind: 'invalid' };
  return value.trim() === '' ? { kind: 'absent' } : { kind: 'text', text: value.trim() };
}

const equalTo = (claim: unknown, wanted: RequestText): boolean => {
  const text = claimText(claim);
  return text !== undefined && wanted.kind === 'text' && text === wanted.text;
};

/** DESIGN 6.2 for a config read, in its order: host always, sid when named, env when named. */
export function configRuleRefuses(claims: Readonly<Record<string, unknown>>, query: QueryValues): Reason | undefined {
  if (!equalTo(claims.host, requestText(query.host))) return 'host';
  const serviceId = requestText(query.serviceId);
  if (serviceId.kind !== 'absent' && !equalTo(claims.sid, serviceId)) return 'sid';
  const envTag = requestText(query.envTag);
  if (envTag.kind !== 'absent' && !equalTo(claims.env, envTag)) return 'env';
  return undefined;
}

/** DESIGN 6.3 for `service/register`: sid always, the controller's host always, env when named. */
export function registerRuleRefuses(
  claims: Readonly<Record<string, unknown>>,
  params: Readonly<Record<string, unknown>>,
  controllerHostId: string,
): Reason | undefined {
  if (!equalTo(claims.sid, requestText(params.serviceId))) return 'sid';
  if (!equalTo(claims.host, requestText(controllerHostId))) return 'host';
  const envTag = requestText(params.envTag);
  if (envTag.kind !== 'absent' && !equalTo(claims.env, envTag)) return 'env';
  return undefined;
}

/** The environment a registration allowed by the rule is stored under: the named one, else the token's. */
export function expectedEnv(claims: Readonly<Record<string, unknown>>, envTag: unknown): string | null {
  const named = requestText(envTag);
  if (named.kind === 'text') return named.text;
  return claimText(claims.env) ?? null;
}

export interface QueryValues {
  readonly host?: unknown;
  readonly serviceId?: unknown;
  readonly envTag?: unknown;
}

/** C0 controls and DEL: refused in ids by validation (DESIGN 3), whatever the binding decided. */
// eslint-disable-next-line no-control-regex
export const CONTROL = /[\u0000-\u001f\u007f]/;

/** DESIGN 6.2 / 6.3: at least 2,000 generated cases per transport per CI run. */
export const PROPERTY_RUNS = Number(process.env.BINDING_PROPERTY_RUNS ?? 2000);

/** The sentence of each refusal (DESIGN 6.2, 6.3): the controller names its own host, the config server the query's. */
export const SENTENCES: Readonly<Record<'config' | 'register', Readonly<Record<Reason, string>>>> = {
  config: {
    host: 'Token host does not match requested host',
    sid: 'Token sid does not match requested serviceId',
    env: 'Token env does not match requested envTag',
  },
  register: {
    host: 'Token host does not match controller hostId',
    sid: 'Token sid does not match requested serviceId',
    env: 'Token env does not match requested envTag',
  },
};

/** The outcomes a run reached, so one that never reached a side of the rule fails instead of passing vacuously. */
export class Outcomes {
  private readonly seen = new Map<string, number>();

  saw(refused: Reason | undefined): void {
    const outcome = refused ?? 'allowed';
    this.seen.set(outcome, (this.seen.get(outcome) ?? 0) + 1);
  }

  /** The outcomes never reached, of allowed, host, sid and env: empty after a run that covered the rule. */
  missing(): string[] {
    return ['allowed', 'host', 'sid', 'env'].filter((outcome) => !this.seen.has(outcome));
  }
}
