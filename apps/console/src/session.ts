/** The operator's token: kept in sessionStorage (this tab only), sent only as the Authorization header. */
const KEY = 'bindery.token';

export interface Identity {
  readonly token: string;
  readonly subject: string;
  readonly host: string | null;
  readonly scopes: ReadonlySet<string>;
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
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    const claims = JSON.parse(json) as Record<string, unknown>;
    const scopes = new Set<string>();
    if (Array.isArray(claims.scp)) for (const scope of claims.scp) if (typeof scope === 'string') scopes.add(scope);
    if (typeof claims.scope === 'string') for (const scope of claims.scope.split(' ')) if (scope) scopes.add(scope);
    const subject = [claims.sub, claims.client_id, claims.cid].find((value) => typeof value === 'string');
    return {
      token,
      subject: typeof subject === 'string' ? subject : 'unknown',
      host: typeof claims.host === 'string' ? claims.host : null,
      scopes,
    };
  } catch {
    return null;
  }
}

export const canRead = (identity: Identity): boolean =>
  ['portal.r', 'portal.w', 'portal.admin'].some((scope) => identity.scopes.has(scope));
export const canWrite = (identity: Identity): boolean =>
  identity.scopes.has('portal.w') || identity.scopes.has('portal.admin');
export const isAdmin = (identity: Identity): boolean => identity.scopes.has('portal.admin');
