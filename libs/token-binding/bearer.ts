/** The RFC 6750 challenge both processes send with a 401 (DESIGN 3); `error=...` is appended to it. */
export const BEARER_REALM = 'Bearer realm="bindery"';

/** `Authorization: Bearer <token>` only; undefined when absent, malformed or of another scheme. */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  const credential = bearerCredential(header);
  return credential.kind === 'token' ? credential.token : undefined;
}

/**
 * What an `Authorization` header offers (RFC 6750 2.1, 3.1): no Bearer credential (absent, empty, or another
 * scheme such as Basic), a malformed one (`Bearer` with no token or only spaces after it, `Bearer a b`: DESIGN
 * 3 answers it `invalid_token`), or one token68.
 */
export type BearerCredential =
  { readonly kind: 'none' } | { readonly kind: 'malformed' } | { readonly kind: 'token'; readonly token: string };

const BEARER = /^Bearer(?:[ \t]+(.*))?$/i;
const TOKEN68 = /^[A-Za-z0-9\-._~+/]+=*$/;

export function bearerCredential(header: string | string[] | undefined): BearerCredential {
  if (typeof header !== 'string') return { kind: 'none' };
  const match = BEARER.exec(header.trim());
  if (match === null) return { kind: 'none' };
  const rest = (match[1] ?? '').trim();
  // The scheme names a Bearer credential, so a missing token is a malformed one, not an absent one.
  if (rest === '') return { kind: 'malformed' };
  return TOKEN68.test(rest) ? { kind: 'token', token: rest } : { kind: 'malformed' };
}
