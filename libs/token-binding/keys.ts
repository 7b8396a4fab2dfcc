import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';

/** A key could not be chosen for a token: the token is answered 401. */
export class UnknownKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnknownKeyError';
  }
}

/** The key source itself failed (JWKS unreachable): a server-side fault, answered 503, not 401. */
export class KeySourceUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeySourceUnavailableError';
  }
}

export interface KeyStore {
  /** The public key for a token with this `kid`; parsed once, never per request. */
  keyFor(kid: string | undefined): KeyObject | Promise<KeyObject>;
}

interface Jwks {
  keys: JsonWebKey[];
}

function isJwks(value: unknown): value is Jwks {
  return typeof value === 'object' && value !== null && Array.isArray((value as Jwks).keys);
}

/** Parses public JWKs into key objects, once; private parts and symmetric keys are refused. */
function parseJwks(jwks: Jwks): Map<string, KeyObject> {
  const keys = new Map<string, KeyObject>();
  for (const jwk of jwks.keys) {
    if (jwk.kty === 'oct') continue; // HMAC secrets are never accepted as verification keys.
    if (jwk.use !== undefined && jwk.use !== 'sig') continue;
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicPart } = jwk;
    const kid = typeof jwk.kid === 'string' ? jwk.kid : '';
    keys.set(kid, createPublicKey({ key: publicPart, format: 'jwk' }));
  }
  return keys;
}

function pick(keys: ReadonlyMap<string, KeyObject>, kid: string | undefined): KeyObject | undefined {
  if (kid !== undefined) return keys.get(kid) ?? (keys.size === 1 ? keys.get('') : undefined);
  return keys.size === 1 ? keys.values().next().value : undefined;
}

/** Keys known at start: a JWKS file, a PEM public key file, or the dev key. */
export class StaticKeyStore implements KeyStore {
  constructor(private readonly keys: ReadonlyMap<string, KeyObject>) {
    if (keys.size === 0) throw new Error('no usable public key');
  }

  static fromJwks(jwks: Jwks): StaticKeyStore {
    return new StaticKeyStore(parseJwks(jwks));
  }

  /** A JWKS document or a PEM public key (SPKI or certificate); a PEM key matches any `kid`. */
  static async fromFile(path: string): Promise<StaticKeyStore> {
    const text = await readFile(path, 'utf8');
    if (text.includes('-----BEGIN')) {
      if (text.includes('PRIVATE KEY')) throw new Error(`${path} holds a private key; give the public key`);
      return new StaticKeyStore(new Map([['', createPublicKey(text)]]));
    }
    const parsed: unknown = JSON.parse(text);
    if (!isJwks(parsed)) throw new Error(`${path} is neither a JWKS ({"keys": [...]}) nor a PEM public key`);
    return StaticKeyStore.fromJwks(parsed);
  }

  keyFor(kid: string | undefined): KeyObject {
    const key = pick(this.keys, kid);
    if (key === undefined) throw new UnknownKeyError(`no key for kid ${kid ?? '(none)'}`);
    return key;
  }
}

export interface RemoteJwksOptions {
  readonly uri: string;
  /** Least time between two fetches caused by unknown `kid`s: a flood of forged kids costs one fetch. */
  readonly minRefetchIntervalMs?: number;
  /** Keys are refreshed in the background after this long. */
  readonly maxAgeMs?: number;
  readonly timeoutMs?: number;
  readonly fetch?: typeof fetch;
}

/** Keys from `JWT_JWKS_URI`: fetched once, cached, refetched on an unknown `kid` at most once per interval. */
export class RemoteJwksKeyStore implements KeyStore {
  private keys = new Map<string, KeyObject>();
  private fetchedAt = 0;
  private lastAttemptAt = 0;
  private lastAttemptFailed = false;
  private inFlight: Promise<void> | undefined;
  private readonly minRefetchIntervalMs: number;
  private readonly maxAgeMs: number;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: RemoteJwksOptions) {
    this.minRefetchIntervalMs = options.minRefetchIntervalMs ?? 30_000;
    this.maxAgeMs = options.maxAgeMs ?? 600_000;
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.fetchImpl = options.fetch ?? fetch;
  }

  keyFor(kid: string | undefined): KeyObject | Promise<KeyObject> {
    const age = Date.now() - this.fetchedAt;
    const key = pick(this.keys, kid);
    if (key !== undefined) {
      if (age > this.maxAgeMs) void this.refresh().catch(() => undefined);
      return key;
    }
    // A failed fetch is retried after a second; a successful one only after the full interval.
    const wait = this.lastAttemptFailed ? Math.min(1000, this.minRefetchIntervalMs) : this.minRefetchIntervalMs;
    if (this.lastAttemptAt !== 0 && Date.now() - this.lastAttemptAt < wait) {
      if (this.fetchedAt === 0) throw new KeySourceUnavailableError('JWKS not loaded yet');
      throw new UnknownKeyError(`no key for kid ${kid ?? '(none)'}`);
    }
    return this.refresh().then(() => {
      const found = pick(this.keys, kid);
      if (found === undefined) throw new UnknownKeyError(`no key for kid ${kid ?? '(none)'}`);
      return found;
    });
  }

  private refresh(): Promise<void> {
    this.inFlight ??= this.load().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async load(): Promise<void> {
    let body: unknown;
    this.lastAttemptAt = Date.now();
    this.lastAttemptFailed = true;
    try {
      const response = await this.fetchImpl(this.options.uri, {
        signal: AbortSignal.timeout(this.timeoutMs),
        headers: { accept: 'application/json' },
      });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      body = await response.json();
    } catch (error) {
      throw new KeySourceUnavailableError(`JWKS fetch failed: ${(error as Error).message}`);
    }
    if (!isJwks(body)) throw new KeySourceUnavailableError('JWKS response has no "keys" array');
    this.keys = parseJwks(body);
    this.fetchedAt = Date.now();
    this.lastAttemptFailed = false;
  }
}
