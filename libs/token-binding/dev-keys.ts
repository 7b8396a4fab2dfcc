import { SignJWT, type JWTPayload } from 'jose';
import { generateKeyPairSync, createPrivateKey, randomBytes, type JsonWebKey, type KeyObject } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { jwkThumbprint } from './jwk-thumbprint.js';

export const DEV_KEY_ALG = 'ES256';

export interface DevKey {
  readonly kid: string;
  readonly privateKey: KeyObject;
  readonly publicJwk: JsonWebKey;
}

const fileIn = (dataDir: string): string => join(dataDir, 'dev-keys', 'es256.private.jwk.json');

/** The key of a stored JWK; its `kid` is its RFC 7638 thumbprint (DESIGN 10), whatever the file says. */
function fromJwk(jwk: JsonWebKey): DevKey {
  const { d: _d, kid: _kid, ...publicJwk } = jwk as JsonWebKey & { kid?: string };
  return {
    kid: jwkThumbprint(publicJwk),
    privateKey: createPrivateKey({ key: jwk, format: 'jwk' }),
    publicJwk: { ...publicJwk, alg: DEV_KEY_ALG, use: 'sig' },
  };
}

/** Loads the dev signing key from `dataDir`, generating it on first use (DESIGN 6.5). */
export async function ensureDevKey(dataDir: string): Promise<DevKey> {
  const file = fileIn(dataDir);
  try {
    return fromJwk(JSON.parse(await readFile(file, 'utf8')) as JsonWebKey);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = privateKey.export({ format: 'jwk' });
  await mkdir(join(dataDir, 'dev-keys'), { recursive: true, mode: 0o700 });
  // Written whole to a private temporary file, then linked into place: a reader never sees half a key, and
  // when two processes start together the first link wins and the other reads that key.
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temporary, JSON.stringify(jwk), { mode: 0o600 });
  try {
    await link(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return fromJwk(JSON.parse(await readFile(file, 'utf8')) as JsonWebKey);
  } finally {
    await unlink(temporary);
  }
  return fromJwk(jwk);
}

export interface DevTokenOptions {
  readonly issuer: string;
  readonly audience: string;
  readonly expiresInSec?: number;
}

/** Signs a token with the dev key: what `npm run token` prints (DESIGN 6.5). */
export function signDevToken(key: DevKey, claims: JWTPayload, options: DevTokenOptions): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: DEV_KEY_ALG, kid: key.kid, typ: 'JWT' })
    .setIssuer(options.issuer)
    .setAudience(options.audience)
    .setIssuedAt(now)
    .setExpirationTime(now + (options.expiresInSec ?? 3600))
    .sign(key.privateKey);
}
