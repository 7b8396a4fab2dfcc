import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT, type JWTPayload } from 'jose';
import { issuerKeyOf } from '#token-binding';

export const ISSUER = 'https://issuer.test';
export const AUDIENCE = 'bindery';

interface TestKey {
  readonly kid: string;
  readonly alg: string;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
}

function key(kid: string, alg: string, type: 'ec' | 'rsa' | 'ed25519'): TestKey {
  const pair =
    type === 'ec'
      ? generateKeyPairSync('ec', { namedCurve: 'P-256' })
      : type === 'rsa'
        ? generateKeyPairSync('rsa', { modulusLength: 2048 })
        : generateKeyPairSync('ed25519');
  return { kid, alg, ...pair };
}

/** Trusted keys of the test issuer, one per accepted algorithm family. */
export const KEYS = {
  es256: key('test-es256', 'ES256', 'ec'),
  rs256: key('test-rs256', 'RS256', 'rsa'),
  ps256: key('test-ps256', 'PS256', 'rsa'),
  eddsa: key('test-eddsa', 'EdDSA', 'ed25519'),
} as const;

/** A key nobody trusts, for forged tokens. */
export const UNTRUSTED = key('test-es256', 'ES256', 'ec');

/**
 * The trusted public keys as JWKS, exported once at load: Node 20 once deadlocked exporting the Ed25519
 * key as JWK while a garbage collection freed a key-generation job, so the export is not repeated per app.
 */
const JWKS = JSON.stringify({
  keys: Object.values(KEYS).map((k) => ({
    ...k.publicKey.export({ format: 'jwk' }),
    kid: k.kid,
    alg: k.alg,
    use: 'sig',
  })),
});

/** Writes the trusted public keys as a JWKS file and returns its path (for JWT_JWKS_FILE). */
export function writeJwksFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'bindery-jwks-'));
  const path = join(dir, 'jwks.json');
  writeFileSync(path, JWKS);
  return path;
}

export interface TokenOptions {
  readonly key?: TestKey;
  readonly kid?: string | null;
  readonly issuer?: string | null;
  readonly audience?: string | string[] | null;
  /** Seconds from now; null for no `exp`. */
  readonly expiresIn?: number | null;
  readonly notBefore?: number;
}

/** Signs a token as the trusted test issuer would; every default can be overridden or removed. */
export async function token(claims: JWTPayload = {}, options: TokenOptions = {}): Promise<string> {
  const signer = options.key ?? KEYS.es256;
  const now = Math.floor(Date.now() / 1000);
  const jwt = new SignJWT({ ...claims }).setProtectedHeader({
    alg: signer.alg,
    ...(options.kid === null ? {} : { kid: options.kid ?? signer.kid }),
  });
  jwt.setIssuedAt(now);
  if (options.issuer !== null) jwt.setIssuer(options.issuer ?? ISSUER);
  if (options.audience !== null) jwt.setAudience(options.audience ?? AUDIENCE);
  if (options.expiresIn !== null) jwt.setExpirationTime(now + (options.expiresIn ?? 3600));
  if (options.notBefore !== undefined) jwt.setNotBefore(now + options.notBefore);
  return jwt.sign(signer.privateKey);
}

/** Common callers. */
export const callers = {
  admin: (extra: JWTPayload = {}) => token({ sub: 'root', scope: 'portal.admin', ...extra }),
  writer: (host: string, extra: JWTPayload = {}) =>
    token({ sub: `w-${host}`, scp: ['portal.r', 'portal.w'], host, ...extra }),
  reader: (host: string, extra: JWTPayload = {}) => token({ sub: `r-${host}`, scope: 'portal.r', host, ...extra }),
};

const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Hand-made token text for cases no honest signer produces. */
export function rawToken(header: unknown, payload: unknown, signature = 'c2ln'): string {
  return `${b64(header)}.${typeof payload === 'string' ? Buffer.from(payload).toString('base64url') : b64(payload)}.${signature}`;
}

/** Two issuer keys (EC P-256, then RSA 2048) in one PEM file for TOKEN_ISSUER_KEY_FILE, and their kids. */
export function writeIssuerKeyFile(): { file: string; kids: string[] } {
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const file = join(mkdtempSync(join(tmpdir(), 'bindery-issuer-')), 'issuer.pem');
  writeFileSync(file, [ec, rsa].map((k) => k.export({ format: 'pem', type: 'pkcs8' }).toString()).join('\n'));
  return { file, kids: [issuerKeyOf(ec).kid, issuerKeyOf(rsa).kid] };
}
