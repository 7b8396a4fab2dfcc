import { claimsOf, type Capability, type TokenClaims } from './capabilities.js';

/** The operator's token: kept in sessionStorage (this tab only), sent only as the Authorization header. */
const KEY = 'bindery.token';

/** The signed-in token and what it allows, as the api reads it (capabilities.ts). */
export interface Identity extends TokenClaims {
  readonly token: string;
  /** The claims' subject, else `unknown`. */
  readonly subject: string;
}

export function storedToken(): string | null {
  return sessionStorage.getItem(KEY);
}

export function storeToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(KEY);
}

/**
 * What the token says about its holder, read without verifying it: only to decide which actions the page
 * offers. The api verifies every request; a forged claim here only shows buttons the api then refuses.
 */
export function identityOf(token: string): Identity | null {
  const payload = token.split('.')[1];
  if (payload === undefined) return null;
  try {
    const binary = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    const json = new TextDecoder('utf-8', { fatal: true }).decode(Uint8Array.from(binary, (c) => c.charCodeAt(0)));
    const claims: unknown = JSON.parse(json);
    if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) return null;
    const read = claimsOf(claims as Record<string, unknown>);
    return { ...read, token, subject: read.subject ?? 'unknown' };
  } catch {
    return null;
  }
}

/** Whether the token's scopes allow `capability` (DESIGN 16), as the api decides it. */
export const may = (identity: Identity, capability: Capability): boolean => identity.capabilities.has(capability);
