import { createHmac, sign } from 'node:crypto';
import { CompactSign } from 'jose';
import { AUDIENCE, ISSUER, KEYS, UNTRUSTED, rawToken, token } from './tokens.js';

/**
 * The one table of bad tokens (DESIGN 6.1): every entry is refused with 401 on HTTP and -32001 / an upgrade
 * 401 on the controller's WebSocket; test/auth/bad-tokens.spec.ts and test/controller/bad-tokens.spec.ts
 * run it on both transports.
 */
/** The claims of every entry: valid for a read, and bound to a registration, so only the token is wrong. */
export const BAD_TOKEN_CLAIMS = { sub: 'alice', scope: 'portal.r', sid: 'bad-token-svc', host: 'bad-token-host' };
const claims = BAD_TOKEN_CLAIMS;
const now = () => Math.floor(Date.now() / 1000);

/** The classic key-confusion forgery: HS256 keyed with the issuer's public key text. */
function hs256WithPublicKey(): string {
  const header = Buffer.from(JSON.stringify({ alg: 'HS256', kid: KEYS.rs256.kid })).toString('base64url');
  const payload = Buffer.from(JSON.stringify({ ...claims, iss: ISSUER, aud: AUDIENCE, exp: now() + 600 })).toString(
    'base64url',
  );
  const secret = KEYS.rs256.publicKey.export({ type: 'spki', format: 'pem' });
  const signature = createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}

/** A correctly signed JWS whose payload is JSON but not an object. */
function signedNonObject(payload: string): Promise<string> {
  return signedRaw(payload);
}

/** A JWS signed by a trusted key over exactly this payload text, with extra protected header fields. */
function signedRaw(payload: string, header: Record<string, unknown> = {}): Promise<string> {
  return new CompactSign(new TextEncoder().encode(payload))
    .setProtectedHeader({ alg: 'ES256', kid: KEYS.es256.kid, ...header })
    .sign(KEYS.es256.privateKey);
}

/** Signs exact header and payload texts with the trusted ES256 key (for JSON no library would write). */
function signedText(header: string, payload: string): string {
  const input = `${Buffer.from(header).toString('base64url')}.${Buffer.from(payload).toString('base64url')}`;
  const signature = sign('sha256', Buffer.from(input), { key: KEYS.es256.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

const goodClaims = (): Record<string, unknown> => ({ ...claims, iss: ISSUER, aud: AUDIENCE, exp: now() + 600 });
const untrustedJwk = UNTRUSTED.publicKey.export({ format: 'jwk' });

export const BAD_TOKENS: [string, () => Promise<string> | string][] = [
  ['alg none', () => rawToken({ alg: 'none' }, { ...claims, iss: ISSUER, aud: AUDIENCE, exp: now() + 600 }, '')],
  ['HS256 signed with the public key', hs256WithPublicKey],
  ['unknown kid', () => token(claims, { kid: 'nobody' })],
  ['signed by an untrusted key under a trusted kid', () => token(claims, { key: UNTRUSTED })],
  ['expired', () => token(claims, { expiresIn: -120 })],
  ['no exp', () => token(claims, { expiresIn: null })],
  ['nbf in the future', () => token(claims, { notBefore: 600 })],
  ['wrong iss', () => token(claims, { issuer: 'https://evil.test' })],
  ['no iss', () => token(claims, { issuer: null })],
  ['wrong aud', () => token(claims, { audience: 'someone-else' })],
  ['no aud', () => token(claims, { audience: null })],
  ['one segment', () => 'abc'],
  ['two segments', () => 'abc.def'],
  ['four segments', async () => `${await token(claims)}.x`],
  ['header not JSON', () => `bm90IGpzb24.${Buffer.from('{}').toString('base64url')}.c2ln`],
  ['payload a JSON string', () => signedNonObject('"just a string"')],
  ['payload a JSON array', () => signedNonObject('[1,2]')],
  [
    'tampered payload',
    async () => {
      const [h, , s] = (await token(claims)).split('.');
      const forged = Buffer.from(
        JSON.stringify({ ...claims, scope: 'portal.admin', iss: ISSUER, aud: AUDIENCE, exp: now() + 600 }),
      ).toString('base64url');
      return `${h}.${forged}.${s}`;
    },
  ],
  // jsonwebtoken ignores these; the pre-screen (token-rules.ts) refuses them before a key is chosen.
  [
    'crit with an unknown parameter',
    () =>
      signedText(
        JSON.stringify({ alg: 'ES256', kid: KEYS.es256.kid, crit: ['exp-x'], 'exp-x': 1 }),
        JSON.stringify(goodClaims()),
      ),
  ],
  [
    'b64 false (unencoded payload)',
    () =>
      signedText(
        JSON.stringify({ alg: 'ES256', kid: KEYS.es256.kid, b64: false, crit: ['b64'] }),
        JSON.stringify(goodClaims()),
      ),
  ],
  ['a jku header', () => signedRaw(JSON.stringify(goodClaims()), { jku: 'https://evil.test/jwks.json' })],
  ['an x5u header', () => signedRaw(JSON.stringify(goodClaims()), { x5u: 'https://evil.test/cert.pem' })],
  ['an x5c header', () => signedRaw(JSON.stringify(goodClaims()), { x5c: ['MIIB'] })],
  [
    'a jwk header naming the signing key (signed by that untrusted key)',
    () =>
      new CompactSign(new TextEncoder().encode(JSON.stringify(goodClaims())))
        .setProtectedHeader({ alg: 'ES256', jwk: untrustedJwk })
        .sign(UNTRUSTED.privateKey),
  ],
  [
    'a duplicate claim (scope twice, the last one admin)',
    () => {
      const { scope: _scope, ...rest } = goodClaims();
      return signedRaw(`${JSON.stringify(rest).slice(0, -1)},"scope":"portal.r","scope":"portal.admin"}`);
    },
  ],
  [
    'a duplicate header name',
    () => signedText(`{"alg":"ES256","kid":"nobody","kid":"${KEYS.es256.kid}"}`, JSON.stringify(goodClaims())),
  ],
  ['exp a string', () => signedRaw(JSON.stringify({ ...goodClaims(), exp: String(now() + 600) }))],
  ['payload JSON null', () => signedNonObject('null')],
  ['an EdDSA token (jsonwebtoken cannot verify EdDSA)', () => token(claims, { key: KEYS.eddsa })],
  [
    'an algorithm outside the allowlist (ES256 key, header RS512)',
    () => rawToken({ alg: 'RS512', kid: KEYS.rs256.kid }, { ...claims, iss: ISSUER, aud: AUDIENCE, exp: now() + 600 }),
  ],
];
