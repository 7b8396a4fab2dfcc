import type { JWTPayload } from 'jose';

export const SCOPE_READ = 'portal.r';
export const SCOPE_WRITE = 'portal.w';
export const SCOPE_ADMIN = 'portal.admin';

/** The caller, as established by a verified token. Services take this as an argument. */
export interface Principal {
  /** `sub`, else `client_id`, else `cid`: who is written into `updateUser`. */
  readonly subject: string | null;
  readonly scopes: ReadonlySet<string>;
  /** `host` claim when it is a non-blank string. */
  readonly host: string | null;
  /** Verified claims, for the binding rule; never logged whole. */
  readonly claims: Readonly<JWTPayload>;
}

function stringClaim(payload: JWTPayload, name: string): string | null {
  const value = payload[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

/** Scopes from `scp` (array, or a space-separated string) and `scope` (space-separated string). */
export function scopesOf(payload: JWTPayload): Set<string> {
  const scopes = new Set<string>();
  const add = (value: unknown): void => {
    if (typeof value === 'string') for (const s of value.split(' ')) if (s !== '') scopes.add(s);
    if (Array.isArray(value)) for (const s of value) if (typeof s === 'string' && s !== '') scopes.add(s);
  };
  add(payload.scp);
  add(payload.scope);
  return scopes;
}

export function principalOf(payload: JWTPayload): Principal {
  const subject = stringClaim(payload, 'sub') ?? stringClaim(payload, 'client_id') ?? stringClaim(payload, 'cid');
  return {
    subject: subject === null ? null : subject.slice(0, 255),
    scopes: scopesOf(payload),
    host: stringClaim(payload, 'host'),
    claims: payload,
  };
}

/** Scopes form a ladder: admin implies write, write implies read (docs/token-issuer.md, "Tokens Bindery accepts"). */
export function hasScope(principal: Principal, required: string): boolean {
  const s = principal.scopes;
  if (s.has(SCOPE_ADMIN)) return true;
  if (required === SCOPE_READ) return s.has(SCOPE_READ) || s.has(SCOPE_WRITE);
  return s.has(required);
}

export const isAdmin = (principal: Principal): boolean => principal.scopes.has(SCOPE_ADMIN);
