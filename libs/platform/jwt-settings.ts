import { bool, positiveInt, SettingsError, text, url, type Env } from './env-values.js';

// The settings of the tokens Bindery verifies and issues (DESIGN 6.1, 10), checked as loadSettings reads them.

/** Algorithms passport-jwt (jsonwebtoken) can verify with a public key; `none`, HMAC and EdDSA are not here. */
export const ASYMMETRIC_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
] as const;
export type JwtAlgorithm = (typeof ASYMMETRIC_ALGORITHMS)[number];

function refusalReason(alg: string): string {
  const allowed = `use public-key algorithms from ${ASYMMETRIC_ALGORITHMS.join(',')}`;
  if (alg.toLowerCase() === 'none') return `unsigned tokens are never accepted; ${allowed}`;
  if (/^HS\d+$/i.test(alg)) return `a shared secret would let every verifier mint tokens; ${allowed}`;
  if (alg.toLowerCase() === 'eddsa') return `passport-jwt (jsonwebtoken) cannot verify EdDSA; ${allowed}`;
  return allowed;
}

export function algorithms(env: Env): JwtAlgorithm[] {
  const raw = text(env, 'JWT_ALGORITHMS') ?? 'RS256,ES256,PS256';
  const list = raw
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '');
  if (list.length === 0) throw new SettingsError('JWT_ALGORITHMS', 'must name at least one algorithm');
  for (const alg of list) {
    if (!(ASYMMETRIC_ALGORITHMS as readonly string[]).includes(alg)) {
      throw new SettingsError('JWT_ALGORITHMS', `"${alg}" is not accepted: ${refusalReason(alg)}`);
    }
  }
  return [...new Set(list)] as JwtAlgorithm[];
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Whether a URL names this machine (a JWKS fetched over loopback cannot be intercepted on the path). */
export function isLoopbackUrl(raw: string): boolean {
  const host = new URL(raw).hostname.toLowerCase();
  return LOOPBACK_HOSTS.has(host) || /^127(?:\.\d{1,3}){3}$/.test(host) || host.endsWith('.localhost');
}

/**
 * DESIGN 6.1: in production the keys must come over TLS, else anyone on the path could serve their own key;
 * loopback and an explicit `JWT_JWKS_ALLOW_HTTP=true` (a private network) are the exceptions.
 */
export function jwksUri(env: Env, production: boolean): string | undefined {
  const value = url(env, 'JWT_JWKS_URI', ['https:', 'http:']);
  if (value === undefined || !production || new URL(value).protocol === 'https:') return value;
  if (isLoopbackUrl(value) || bool(env, 'JWT_JWKS_ALLOW_HTTP', false)) return value;
  throw new SettingsError(
    'JWT_JWKS_URI',
    'must be https: with NODE_ENV=production (http: only for loopback, or with JWT_JWKS_ALLOW_HTTP=true on a private network)',
  );
}

/** Issued tokens cannot be revoked before `exp`: a day bounds how long a disabled client's token still works. */
export const MAX_TOKEN_TTL_SEC = 86_400;

export function tokenTtlSec(env: Env): number {
  const value = positiveInt(env, 'TOKEN_TTL_SEC', 900);
  if (value > MAX_TOKEN_TTL_SEC) {
    throw new SettingsError('TOKEN_TTL_SEC', `must be at most ${MAX_TOKEN_TTL_SEC} (got ${value})`);
  }
  return value;
}
