import { errors, jwtVerify, type JWTVerifyOptions } from 'jose';
import type { Settings } from '#platform';
import { principalOf, type Principal } from './claims.js';
import { ensureDevKey } from './dev-keys.js';
import { KeySourceUnavailableError, RemoteJwksKeyStore, StaticKeyStore, type KeyStore } from './keys.js';

/** The token failed verification: answered 401 (HTTP) or -32001 (WebSocket). */
export class InvalidTokenError extends Error {
  constructor(readonly reason: string) {
    super(`invalid token: ${reason}`);
    this.name = 'InvalidTokenError';
  }
}

// Longer headers are refused before any parsing: no legitimate token is this large.
const MAX_TOKEN_LENGTH = 8192;

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
 * The one definition of a valid token for both transports: signature by a configured key (chosen by
 * `kid`), algorithm in the allowlist, exact `iss`, `aud`, `exp` required and in the future, `nbf` not in
 * the future, payload a JSON object.
 */
export class TokenVerifier {
  private readonly options: JWTVerifyOptions;
  private readonly clockToleranceMs: number;
  /** Exact token text -> its principal, until it expires (plus tolerance) or a minute passes. */
  private readonly verified = new Map<string, { readonly principal: Principal; readonly until: number }>();

  constructor(
    private readonly keys: KeyStore,
    policy: VerificationPolicy,
  ) {
    this.options = {
      issuer: policy.issuer,
      audience: policy.audience,
      algorithms: [...policy.algorithms],
      clockTolerance: policy.clockToleranceSec,
      requiredClaims: ['exp'],
    };
    this.clockToleranceMs = policy.clockToleranceSec * 1000;
  }

  async verify(token: string): Promise<Principal> {
    if (token.length > MAX_TOKEN_LENGTH) throw new InvalidTokenError('too long');
    const known = this.verified.get(token);
    if (known !== undefined) {
      if (Date.now() < known.until) return known.principal;
      this.verified.delete(token);
    }
    try {
      const { payload } = await jwtVerify(token, (header) => this.keys.keyFor(header.kid), this.options);
      const principal = principalOf(payload);
      this.remember(token, (payload.exp as number) * 1000, principal);
      return principal;
    } catch (error) {
      if (error instanceof KeySourceUnavailableError) throw error;
      throw new InvalidTokenError(error instanceof errors.JOSEError ? error.code : (error as Error).name);
    }
  }

  /** `exp` is checked as jose checks it (valid while now < exp + tolerance); the oldest entry makes room. */
  private remember(token: string, expMs: number, principal: Principal): void {
    const until = Math.min(expMs + this.clockToleranceMs, Date.now() + VERIFIED_CACHE_MS);
    if (this.verified.size >= VERIFIED_CACHE_SIZE) this.verified.delete(this.verified.keys().next().value as string);
    this.verified.set(token, { principal, until });
  }
}

/** Builds the key store the settings name: a JWKS URL, a JWKS or PEM file, or the dev key. */
export async function keyStoreFor(settings: Settings): Promise<KeyStore> {
  if (settings.jwt.jwksUri !== undefined) return new RemoteJwksKeyStore({ uri: settings.jwt.jwksUri });
  if (settings.jwt.jwksFile !== undefined) return StaticKeyStore.fromFile(settings.jwt.jwksFile);
  const dev = await ensureDevKey(settings.dataDir);
  return StaticKeyStore.fromJwks({ keys: [{ ...dev.publicJwk, kid: dev.kid }] });
}

export async function tokenVerifierFor(settings: Settings): Promise<TokenVerifier> {
  return new TokenVerifier(await keyStoreFor(settings), settings.jwt);
}

/** `Authorization: Bearer <token>` only; undefined when absent or of another scheme. */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer +([^\s]+) *$/i.exec(header);
  return match?.[1];
}
