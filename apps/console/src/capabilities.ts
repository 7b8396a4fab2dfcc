/**
 * What a token allows, computed in the page exactly as the api computes it (DESIGN 16; the api's rule is in
 * libs/token-binding/capabilities.ts and claims.ts, and test/console/capabilities.spec.ts compares the two over
 * every combination of scopes). Only to decide what the page offers: the api judges every request itself.
 * No DOM here, so the spec imports this file as it is.
 */
export const CAPABILITIES = [
  'tags:read',
  'tags:write',
  'tags:admin',
  'config:read',
  'config:admin',
  'registry:register',
  'registry:discover',
  'registry:read',
  'clients:admin',
] as const;

export type Capability = (typeof CAPABILITIES)[number];

const isCapability = (scope: string): scope is Capability => (CAPABILITIES as readonly string[]).includes(scope);

/**
 * A token carrying any capability scope is judged by those alone (tags:admin implies tags:write implies
 * tags:read; nothing else is implied); one with none by its broad scopes (portal.r: tags:read and config:read;
 * portal.w: tags:read and tags:write; portal.admin: everything but config:read), and it may always register and
 * discover.
 */
export function capabilitiesOf(scopes: Iterable<string>): ReadonlySet<Capability> {
  const all = [...scopes];
  const fine = all.filter(isCapability);
  if (fine.length > 0) {
    const implied: Partial<Record<Capability, Capability[]>> = {
      'tags:write': ['tags:read'],
      'tags:admin': ['tags:write', 'tags:read'],
    };
    return new Set(fine.flatMap((capability) => [capability, ...(implied[capability] ?? [])]));
  }
  // A Map, not an object: a scope named `constructor` or `__proto__` must find nothing.
  const broad = new Map<string, readonly Capability[]>([
    ['portal.r', ['tags:read', 'config:read']],
    ['portal.w', ['tags:read', 'tags:write']],
    ['portal.admin', CAPABILITIES.filter((c) => c !== 'config:read')],
  ]);
  return new Set<Capability>(['registry:register', 'registry:discover', ...all.flatMap((s) => broad.get(s) ?? [])]);
}

/** What the page knows of a token's holder, read from its (unverified) claims as the api reads them. */
export interface TokenClaims {
  /** `sub`, else `client_id`, else `cid`. */
  readonly subject: string | null;
  /** The host the token acts for; null for a token without one. */
  readonly host: string | null;
  readonly scopes: ReadonlySet<string>;
  readonly capabilities: ReadonlySet<Capability>;
}

// C0 controls and DEL, which the api replaces with U+FFFD in `sub` and `host` (DESIGN 3).
// eslint-disable-next-line no-control-regex -- control characters are exactly what is replaced
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/gu;

function stringClaim(claims: Readonly<Record<string, unknown>>, name: string): string | null {
  const value = claims[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

/** The host of a token whose `host` claim names none (the api's `UNUSABLE_HOST`): no stored host is empty. */
export const NO_HOST = '';

/** Subject, host and scopes (`scp` as array or string, `scope` as string), as the api's `principalOf`. */
export function claimsOf(claims: Readonly<Record<string, unknown>>): TokenClaims {
  const scopes = new Set<string>();
  const add = (value: unknown): void => {
    if (typeof value === 'string') for (const s of value.split(' ')) if (s !== '') scopes.add(s);
    if (Array.isArray(value)) for (const s of value) if (typeof s === 'string' && s !== '') scopes.add(s);
  };
  add(claims.scp);
  add(claims.scope);
  const subject = stringClaim(claims, 'sub') ?? stringClaim(claims, 'client_id') ?? stringClaim(claims, 'cid');
  return {
    subject: subject === null ? null : subject.replace(CONTROL, '\ufffd').slice(0, 255),
    // Only a token without a `host` claim is hostless; one naming no host is bound to none, as in `principalOf`.
    host: claims.host === undefined ? null : (stringClaim(claims, 'host')?.replace(CONTROL, '\ufffd') ?? NO_HOST),
    scopes,
    capabilities: capabilitiesOf(scopes),
  };
}

/**
 * Whether the api lets `who` write a tag of `hostId` (null: a global tag): tags:write, and then a global tag
 * needs tags:admin, a tag of the token's own host nothing more, another host's tag tags:admin without `host`.
 */
export function mayWriteTag(who: TokenClaims, hostId: string | null): boolean {
  if (!who.capabilities.has('tags:write')) return false;
  if (hostId === null) return who.capabilities.has('tags:admin');
  return hostId === who.host || (who.host === null && who.capabilities.has('tags:admin'));
}

/** Whether `who` may create any tag at all: of its own host (one it names), or (tags:admin) global ones. */
export const mayCreateTags = (who: TokenClaims): boolean =>
  mayWriteTag(who, null) || (who.host !== null && who.host !== NO_HOST && mayWriteTag(who, who.host));
