import { createHash, type JsonWebKey } from 'node:crypto';

/** RFC 7638 members per key type, in the lexicographic order the thumbprint hashes them. */
const THUMBPRINT_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  EC: ['crv', 'kty', 'x', 'y'],
  RSA: ['e', 'kty', 'n'],
  OKP: ['crv', 'kty', 'x'],
};

/** RFC 7638 JWK thumbprint (SHA-256, base64url). */
export function jwkThumbprint(jwk: JsonWebKey): string {
  const members = THUMBPRINT_MEMBERS[jwk.kty ?? ''];
  if (members === undefined) throw new Error(`no thumbprint for key type ${String(jwk.kty)}`);
  const record = jwk as Record<string, unknown>;
  const canonical = `{${members.map((m) => `${JSON.stringify(m)}:${JSON.stringify(record[m])}`).join(',')}}`;
  return createHash('sha256').update(canonical).digest('base64url');
}
