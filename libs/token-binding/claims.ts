import type { JWTPayload } from 'jose';
import { CONTROL_CHARS, type Capability } from '#platform';
import { ADMIN_FORM, capabilitiesOf } from './capabilities.js';

import { SCOPE_ADMIN } from './scopes.js';

export { SCOPE_ADMIN, SCOPE_READ, SCOPE_WRITE } from './scopes.js';

/** The caller, as established by a verified token. Services take this as an argument. */
export interface Principal {
  /** `sub`, else `client_id`, else `cid`: who is written into `updateUser`. */
  readonly subject: string | null;
  readonly scopes: ReadonlySet<string>;
  /** What the scopes allow (DESIGN 16), computed once per verified token. */
  readonly capabilities: ReadonlySet<Capability>;
  /**
   * The host the token acts for: its `host` claim (trimmed); null only when the token has no `host` claim
   * (a global token); `UNUSABLE_HOST` when the claim is there but names no host (blank, not a string).
   */
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

// DESIGN 3's control characters: PostgreSQL's text cannot hold NUL, and no stored name holds the others.
const CONTROL = new RegExp(CONTROL_CHARS.source, 'gu');

/** The host of a token whose `host` claim names none: equal to no stored host and to no host a request names. */
export const UNUSABLE_HOST = '';

function hostOf(payload: JWTPayload): string | null {
  if (payload.host === undefined) return null;
  // Such a host names no stored host (their ids hold no control characters), and never reaches SQL as NUL.
  const host = stringClaim(payload, 'host')?.replace(CONTROL, '\ufffd');
  // A claim that names no host binds the token to no host; read as absent, it would make a global admin.
  return host ?? UNUSABLE_HOST;
}

export function principalOf(payload: JWTPayload): Principal {
  const subject = stringClaim(payload, 'sub') ?? stringClaim(payload, 'client_id') ?? stringClaim(payload, 'cid');
  const scopes = scopesOf(payload);
  return {
    // A signed subject is still only a label: control characters become U+FFFD rather than a 500 on write.
    subject: subject === null ? null : subject.replace(CONTROL, '\ufffd').slice(0, 255),
    scopes,
    capabilities: capabilitiesOf(scopes),
    host: hostOf(payload),
    claims: payload,
  };
}

/** Whether the token's scopes allow `capability` (DESIGN 16). */
export const can = (principal: Principal, capability: Capability): boolean => principal.capabilities.has(capability);

/**
 * A global admin of `capability`'s data: a token without `host` holding its admin form (DESIGN 16). A
 * token with `host` is never one, whatever its scopes.
 */
export const isGlobalAdmin = (principal: Principal, capability: Capability): boolean =>
  principal.host === null && principal.capabilities.has(ADMIN_FORM[capability]);

/** A global admin acting without a token: someone with database access at the command line (DESIGN 10). */
export const operatorPrincipal = (subject: string): Principal => principalOf({ sub: subject, scope: SCOPE_ADMIN });
