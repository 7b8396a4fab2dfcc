/** The identity a runtime is configured with; its token must carry exactly this (DESIGN 11). */
export interface RuntimeIdentity {
  readonly host: string;
  readonly serviceId: string;
  readonly envTag?: string | undefined;
}

/** The issued token does not carry the runtime's identity: token setup fails, no request follows. */
export class RuntimeTokenError extends Error {
  constructor(
    readonly claim: 'host' | 'sid' | 'env' | 'token',
    message: string,
  ) {
    super(message);
    this.name = 'RuntimeTokenError';
  }
}

export interface DecodedToken {
  readonly claims: Readonly<Record<string, unknown>>;
  /** `exp` in epoch seconds. */
  readonly exp: number;
}

/** Reads a JWT's payload without verifying it: the servers verify; the client only checks its own profile. */
export function decodeToken(token: string): DecodedToken {
  const parts = token.split('.');
  if (parts.length !== 3)
    throw new RuntimeTokenError('token', 'the token endpoint returned something that is not a JWT');
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(parts[1] ?? '', 'base64url').toString('utf8'));
  } catch {
    throw new RuntimeTokenError('token', 'the token payload is not JSON');
  }
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) {
    throw new RuntimeTokenError('token', 'the token payload is not a JSON object');
  }
  const exp = (claims as Record<string, unknown>).exp;
  if (typeof exp !== 'number' || !Number.isFinite(exp)) throw new RuntimeTokenError('token', 'the token has no exp');
  return { claims: claims as Record<string, unknown>, exp };
}

const nonBlank = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;

/**
 * The source specification's issuance rule, applied by the runtime itself: `host` and `sid` always,
 * `env` when the runtime sends `envTag`, each equal to the configured value. Throws naming the claim.
 */
export function checkRuntimeClaims(claims: Readonly<Record<string, unknown>>, identity: RuntimeIdentity): void {
  requireClaim(claims, 'host', identity.host.trim(), 'host', '');
  requireClaim(claims, 'sid', identity.serviceId.trim(), 'serviceId', '');
  const envTag = nonBlank(identity.envTag);
  if (envTag !== undefined) requireClaim(claims, 'env', envTag, 'envTag', ' but envTag is set');
}

/** The claim `name` must be a non-blank string equal to the configured `wanted` (named `setting`). */
function requireClaim(
  claims: Readonly<Record<string, unknown>>,
  name: 'host' | 'sid' | 'env',
  wanted: string,
  setting: string,
  why: string,
): void {
  const value = nonBlank(claims[name]);
  if (value === undefined) {
    throw new RuntimeTokenError(name, `the token has no ${name} claim${why}; refusing to use it`);
  }
  if (value !== wanted) {
    throw new RuntimeTokenError(
      name,
      `the token's ${name} claim "${value}" is not the configured ${setting} "${wanted}"`,
    );
  }
}
