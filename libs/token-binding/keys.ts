import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Logger } from '@nestjs/common';

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
  /**
   * Whether `key` is still trusted (DESIGN 6.1: a key that left the JWKS is refused from then on). On the
   * path of every remembered verification, so a Set lookup: an unchanged key keeps its object across reloads.
   */
  holds(key: KeyObject): boolean;
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
  private readonly held: ReadonlySet<KeyObject>;

  constructor(private readonly keys: ReadonlyMap<string, KeyObject>) {
    if (keys.size === 0) throw new Error('no usable public key');
    this.held = new Set(keys.values());
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

  holds(key: KeyObject): boolean {
    return this.held.has(key);
  }
}

export interface RemoteJwksOptions {
  readonly uri: string;
  /** Least time between two fetches caused by unknown `kid`s: a flood of forged kids costs one fetch. */
  readonly minRefetchIntervalMs?: number;
  /** The JWKS is re-read at least this often (`JWT_JWKS_REFRESH_SEC`); keys that left it are dropped. */
  readonly refreshMs?: number;
  readonly timeoutMs?: number;
  readonly fetch?: typeof fetch;
}

/**
 * Keys from `JWT_JWKS_URI`: fetched once, cached, re-read every `refreshMs` by a timer (so a key that left
 * the JWKS is refused even while only remembered verifications use it), and refetched on an unknown `kid`
 * at most once per interval. A failed re-read keeps the keys it had: an outage of the issuer's JWKS must
 * not refuse every token, and it cannot tell that a key was withdrawn.
 */
export class RemoteJwksKeyStore implements KeyStore {
  private keys = new Map<string, KeyObject>();
  private held = new Set<KeyObject>();
  private fetchedAt = 0;
  private lastAttemptAt = 0;
  private lastAttemptFailed = false;
  private inFlight: Promise<void> | undefined;
  private readonly minRefetchIntervalMs: number;
  private readonly refreshMs: number;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;
  private readonly timer: NodeJS.Timeout;
  private readonly logger = new Logger('Jwks');

  constructor(private readonly options: RemoteJwksOptions) {
    this.refreshMs = options.refreshMs ?? 300_000;
    this.minRefetchIntervalMs = options.minRefetchIntervalMs ?? Math.min(30_000, this.refreshMs);
    this.timeoutMs = options.timeoutMs ?? 5_000;
    this.fetchImpl = options.fetch ?? fetch;
    // A timer, not only the next request: remembered verifications never ask the store for a key.
    this.timer = setInterval(() => void this.refresh().catch(() => undefined), this.refreshMs);
    this.timer.unref();
  }

  keyFor(kid: string | undefined): KeyObject | Promise<KeyObject> {
    const age = Date.now() - this.fetchedAt;
    const key = pick(this.keys, kid);
    if (key !== undefined) {
      // A backstop for a timer that fell behind (a blocked event loop): refresh in the background, at most
      // once per interval, so an unreachable JWKS is not asked again on every request.
      if (age > this.refreshMs * 2 && Date.now() - this.lastAttemptAt >= this.minRefetchIntervalMs) {
        void this.refresh().catch(() => undefined);
      }
      return key;
    }
    // A failed fetch is retried after a second; a successful one only after the full interval.
    const wait = this.lastAttemptFailed ? Math.min(1000, this.minRefetchIntervalMs) : this.minRefetchIntervalMs;
    // A fetch in flight (the first one, from the timer) is awaited: it is no failure yet.
    if (this.inFlight === undefined && this.lastAttemptAt !== 0 && Date.now() - this.lastAttemptAt < wait) {
      if (this.fetchedAt === 0) throw new KeySourceUnavailableError('JWKS not loaded yet');
      throw new UnknownKeyError(`no key for kid ${kid ?? '(none)'}`);
    }
    return this.refresh().then(() => {
      const found = pick(this.keys, kid);
      if (found === undefined) throw new UnknownKeyError(`no key for kid ${kid ?? '(none)'}`);
      return found;
    });
  }

  holds(key: KeyObject): boolean {
    return this.held.has(key);
  }

  /** Stops the refresh timer (it is unref'd, so a process exits without this). */
  close(): void {
    clearInterval(this.timer);
  }

  private refresh(): Promise<void> {
    this.inFlight ??= this.load().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async load(): Promise<void> {
    this.lastAttemptAt = Date.now();
    this.lastAttemptFailed = true;
    let next: Map<string, KeyObject>;
    try {
      next = await this.fetchKeys();
    } catch (error) {
      // Operators must see why keys stopped updating; the URI's query may hold a credential, so it is left out.
      this.logger.warn(
        { jwksUri: withoutQuery(this.options.uri), reason: (error as Error).message },
        'JWKS fetch failed',
      );
      throw error;
    }
    // An unchanged key keeps its object, so verifications remembered with it stay valid (`holds`).
    for (const [kid, key] of next) {
      const previous = this.keys.get(kid);
      if (previous?.equals(key) === true) next.set(kid, previous);
    }
    this.keys = next;
    this.held = new Set(next.values());
    this.fetchedAt = Date.now();
    this.lastAttemptFailed = false;
  }

  private async fetchKeys(): Promise<Map<string, KeyObject>> {
    let body: unknown;
    try {
      // No redirect is followed (DESIGN 6.1): another origin, or http: instead of https:, could hand us keys.
      const response = await this.fetchImpl(this.options.uri, {
        signal: AbortSignal.timeout(this.timeoutMs),
        headers: { accept: 'application/json' },
        redirect: 'manual',
      });
      if (response.redirected || (response.status >= 300 && response.status < 400)) {
        await response.body?.cancel();
        throw new Error(`redirect refused (HTTP ${response.status})`);
      }
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      body = await response.json();
    } catch (error) {
      throw new KeySourceUnavailableError(`JWKS fetch failed: ${(error as Error).message}`);
    }
    if (!isJwks(body)) throw new KeySourceUnavailableError('JWKS response has no "keys" array');
    try {
      return parseJwks(body);
    } catch (error) {
      throw new KeySourceUnavailableError(`JWKS holds an unusable key: ${(error as Error).message}`);
    }
  }
}

/** A URL without its query and fragment, for logs. */
function withoutQuery(uri: string): string {
  try {
    const url = new URL(uri);
    return `${url.origin}${url.pathname}`;
  } catch {
    return '(unparsable URL)';
  }
}
