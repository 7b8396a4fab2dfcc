import { createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { SignJWT, type JWTPayload } from 'jose';
import { ensureDevKey } from './dev-keys.js';
import { jwkThumbprint } from './jwk-thumbprint.js';

export { jwkThumbprint } from './jwk-thumbprint.js';

export type IssuerAlgorithm = 'ES256' | 'RS256';

/** One signing key of the built-in issuer (DESIGN 10), parsed once. */
export interface IssuerKey {
  /** RFC 7638 thumbprint: the same key has the same `kid` wherever it is published. */
  readonly kid: string;
  readonly alg: IssuerAlgorithm;
  readonly privateKey: KeyObject;
  readonly publicKey: KeyObject;
  readonly publicJwk: JsonWebKey;
}

function algorithmOf(key: KeyObject): IssuerAlgorithm {
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return 'ES256';
  if (key.asymmetricKeyType === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) >= 2048) return 'RS256';
  throw new Error('issuer keys must be EC P-256 (ES256) or RSA of at least 2048 bits (RS256)');
}

/** The issuer key for a private key object; its `kid` is its RFC 7638 thumbprint (DESIGN 10), the dev key's too. */
export function issuerKeyOf(privateKey: KeyObject): IssuerKey {
  const alg = algorithmOf(privateKey);
  const publicKey = createPublicKey(privateKey);
  const jwk = publicKey.export({ format: 'jwk' });
  const kid = jwkThumbprint(jwk);
  return { kid, alg, privateKey, publicKey, publicJwk: { ...jwk, kid, alg, use: 'sig' } };
}

const PEM_BLOCK = /-----BEGIN ([A-Z ]*PRIVATE KEY)-----[\s\S]+?-----END \1-----/g;

/** `TOKEN_ISSUER_KEY_FILE`: one or more PEM private keys; the first signs, all are published. */
export async function loadIssuerKeys(path: string): Promise<IssuerKey[]> {
  const text = await readFile(path, 'utf8');
  const blocks = text.match(PEM_BLOCK) ?? [];
  if (blocks.length === 0) throw new Error(`${path} holds no PEM private key`);
  const keys = blocks.map((pem) => issuerKeyOf(createPrivateKey(pem)));
  if (new Set(keys.map((k) => k.kid)).size !== keys.length) throw new Error(`${path} holds the same key twice`);
  return keys;
}

export interface IssuedTokenOptions {
  readonly issuer: string;
  readonly audience: string;
  readonly ttlSec: number;
  readonly jti: string;
  readonly now?: number;
}

/** The issuer's keys: the first signs, every one is published in the JWKS. */
export class IssuerKeyRing {
  readonly signer: IssuerKey;

  constructor(readonly keys: readonly IssuerKey[]) {
    const first = keys[0];
    if (first === undefined) throw new Error('the token issuer needs at least one key');
    this.signer = first;
  }

  jwks(): { keys: JsonWebKey[] } {
    return { keys: this.keys.map((k) => k.publicJwk) };
  }

  /** An RFC 9068 access token (`typ: at+jwt`) with the given claims. */
  sign(claims: JWTPayload, options: IssuedTokenOptions): Promise<string> {
    const now = options.now ?? Math.floor(Date.now() / 1000);
    return new SignJWT(claims)
      .setProtectedHeader({ alg: this.signer.alg, kid: this.signer.kid, typ: 'at+jwt' })
      .setIssuer(options.issuer)
      .setAudience(options.audience)
      .setIssuedAt(now)
      .setExpirationTime(now + options.ttlSec)
      .setJti(options.jti)
      .sign(this.signer.privateKey);
  }
}

/** The issuer's keys for these settings: TOKEN_ISSUER_KEY_FILE's, else (dev mode) the dev key. */
export async function issuerKeyRingFor(keyFile: string | undefined, dataDir: string): Promise<IssuerKeyRing> {
  if (keyFile !== undefined) return new IssuerKeyRing(await loadIssuerKeys(keyFile));
  const dev = await ensureDevKey(dataDir);
  return new IssuerKeyRing([issuerKeyOf(dev.privateKey)]);
}
