import type { KeyObject } from 'node:crypto';
import jsonwebtoken, { type Algorithm, type VerifyOptions } from 'jsonwebtoken';
import type { JWTPayload } from 'jose';
import type { Settings } from '#platform';
import { principalOf, type Principal } from './claims.js';
import { ensureDevKey } from './dev-keys.js';
import { IssuerKeyRing, loadIssuerKeys } from './issuer-keys.js';
import { KeySourceUnavailableError, RemoteJwksKeyStore, StaticKeyStore, type KeyStore } from './keys.js';
import { InvalidTokenError, screenToken } from './token-rules.js';

export { InvalidTokenError } from './token-rules.js';

// Clients repeat one token on every call and its signature check was most of a request's CPU (bench/):
// tokens verified in the last minute are remembered by their exact text, at most this many.
const VERIFIED_CACHE_SIZE = 10_000;
const VERIFIED_CACHE_MS = 60_000;

export interface VerificationPolicy {
  readonly issuer: string;
  readonly audience: string;
  readonly algorithms: readonly string[];
  readonly clockToleranceSec: number;
}

/**
 * The one definition of a valid token for both transports: `options` (exact `iss`, `aud`, the algorithm
 * allowlist, clock tolerance) and `keyFor` (the pre-screen of `token-rules.ts`, then the key parsed once
 * and chosen by `kid`). The passport-jwt strategy on HTTP and `verify` on WebSocket both use these two.
 */
export class TokenVerifier {
  readonly options: Readonly<VerifyOptions> & { readonly algorithms: Algorithm[] };
  private readonly clockToleranceMs: number;
  /**
   * Exact token text -> its principal, until it expires (plus tolerance) or a minute passes, and the key
   * that verified it: an entry counts only while the key store still holds that key (DESIGN 6.1).
   */
  private readonly verified = new Map<
    string,
    { readonly principal: Principal; readonly until: number; readonly key: KeyObject }
  >();

  constructor(
    private readonly keys: KeyStore,
    readonly policy: VerificationPolicy,
  ) {
    this.options = Object.freeze({
      issuer: policy.issuer,
      audience: policy.audience,
      algorithms: [...policy.algorithms] as Algorithm[],
      clockTolerance: policy.clockToleranceSec,
    });
    this.clockToleranceMs = policy.clockToleranceSec * 1000;
  }

  /** The key for a raw token, after the checks jsonwebtoken does not make; throws InvalidTokenError. */
  async keyFor(token: string): Promise<KeyObject> {
    const { header } = screenToken(token, this.options.algorithms);
    try {
      return await this.keys.keyFor(header.kid);
    } catch (error) {
      if (error instanceof KeySourceUnavailableError) throw error;
      throw new InvalidTokenError('unknown key');
    }
  }

  /** A token verified earlier and still inside its cache window, or undefined. */
  remembered(token: string): Principal | undefined {
    const known = this.verified.get(token);
    if (known === undefined) return undefined;
    if (Date.now() < known.until && this.keys.holds(known.key)) return known.principal;
    this.verified.delete(token);
    return undefined;
  }

  /** Verifies as the passport-jwt strategy does (same key provider, same options); for the WebSocket side. */
  async verify(token: string): Promise<Principal> {
    return (await this.verifyKeyed(token)).principal;
  }

  /**
   * `verify`, answering also the key that verified the token: a socket verifies its token once and acts with
   * it only while `trusts(key)` (DESIGN 6.1, 8).
   */
  async verifyKeyed(token: string): Promise<{ readonly principal: Principal; readonly key: KeyObject }> {
    const principal = this.remembered(token);
    const known = this.verified.get(token);
    if (principal !== undefined && known !== undefined) return { principal, key: known.key };
    const key = await this.keyFor(token);
    let payload: JWTPayload;
    try {
      payload = jsonwebtoken.verify(token, key, { ...this.options, complete: false }) as JWTPayload;
    } catch (error) {
      throw new InvalidTokenError((error as Error).name);
    }
    return { principal: this.remember(token, payload, key), key };
  }

  /** Whether `key` is still one the store holds: a key that left the JWKS is refused from then on (DESIGN 6.1). */
  trusts(key: KeyObject): boolean {
    return this.keys.holds(key);
  }

  /**
   * Turns a payload passport-jwt verified with `key` (from `keyFor`) into the principal, remembering the
   * token with that key so it is refused once the key leaves the store.
   */
  accept(token: string, payload: JWTPayload, key: KeyObject): Principal {
    return this.remember(token, payload, key);
  }

  private remember(token: string, payload: JWTPayload, key: KeyObject): Principal {
    const principal = principalOf(payload);
    if (!this.keys.holds(key)) return principal;
    const expMs = (payload.exp as number) * 1000;
    const until = Math.min(expMs + this.clockToleranceMs, Date.now() + VERIFIED_CACHE_MS);
    // The oldest entry makes room: the map keeps insertion order.
    if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value as string);
    this.verified.set(token, { principal, until, key });
    return principal;
  }
}

/** Builds the key store the settings name: a JWKS URL, a JWKS or PEM file, or the dev key. */
export async function keyStoreFor(settings: Settings): Promise<KeyStore> {
  if (settings.jwt.jwksUri !== undefined) {
    return new RemoteJwksKeyStore({ uri: settings.jwt.jwksUri, refreshMs: settings.jwt.jwksRefreshSec * 1000 });
  }
  if (settings.jwt.jwksFile !== undefined) return StaticKeyStore.fromFile(settings.jwt.jwksFile);
  // The built-in issuer alone: trust exactly its keys (all of them, so a rotation needs no restart order).
  if (settings.tokenIssuer.keyFile !== undefined) {
    const ring = new IssuerKeyRing(await loadIssuerKeys(settings.tokenIssuer.keyFile));
    return StaticKeyStore.fromJwks(ring.jwks());
  }
  const dev = await ensureDevKey(settings.dataDir);
  return StaticKeyStore.fromJwks({ keys: [{ ...dev.publicJwk, kid: dev.kid }] });
}

export async function tokenVerifierFor(settings: Settings): Promise<TokenVerifier> {
  return new TokenVerifier(await keyStoreFor(settings), settings.jwt);
}
