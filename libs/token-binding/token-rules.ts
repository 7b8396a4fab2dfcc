import type { JWTPayload } from 'jose';

/** The token failed verification: answered 401 (HTTP) or -32001 (WebSocket). */
export class InvalidTokenError extends Error {
  constructor(readonly reason: string) {
    super(`invalid token: ${reason}`);
    this.name = 'InvalidTokenError';
  }
}

// Longer tokens are refused before any parsing: no legitimate token is this large.
export const MAX_TOKEN_LENGTH = 8192;

// Headers that point at or carry key material: Bindery only trusts its configured keys, so a token naming
// its own key is refused outright rather than silently ignored.
const KEY_LOCATION_HEADERS = ['jku', 'x5u', 'jwk', 'x5c'] as const;

const SEGMENT = /^[A-Za-z0-9_-]+$/;

export interface ScreenedHeader {
  readonly alg: string;
  readonly kid: string | undefined;
}

export interface ScreenedToken {
  readonly header: ScreenedHeader;
  readonly payload: JWTPayload;
}

/**
 * What jsonwebtoken leaves unchecked, decided on the raw text before any key is chosen: three base64url
 * segments, header and payload JSON objects without duplicate names, an allowed `alg`, no `crit` or `b64`
 * (RFC 7515 4.1.11: extensions we do not understand make the token invalid), no key-location headers, and a
 * numeric `exp`.
 */
export function screenToken(token: string, algorithms: readonly string[]): ScreenedToken {
  if (token.length > MAX_TOKEN_LENGTH) throw new InvalidTokenError('too long');
  const parts = token.split('.');
  if (parts.length !== 3) throw new InvalidTokenError('not a compact JWS');
  const [rawHeader, rawPayload, signature] = parts as [string, string, string];
  if (!SEGMENT.test(rawHeader) || !SEGMENT.test(rawPayload) || !SEGMENT.test(signature)) {
    throw new InvalidTokenError('not base64url');
  }
  const header = jsonObject(rawHeader, 'header');
  if (typeof header.alg !== 'string' || !algorithms.includes(header.alg)) {
    throw new InvalidTokenError('algorithm not allowed');
  }
  if ('crit' in header) throw new InvalidTokenError('crit header');
  if ('b64' in header) throw new InvalidTokenError('b64 header');
  for (const name of KEY_LOCATION_HEADERS) if (name in header) throw new InvalidTokenError(`${name} header`);
  if (header.kid !== undefined && typeof header.kid !== 'string') throw new InvalidTokenError('kid not a string');
  const payload = jsonObject(rawPayload, 'payload') as JWTPayload;
  if (typeof payload.exp !== 'number' || !Number.isFinite(payload.exp)) throw new InvalidTokenError('exp missing');
  return { header: { alg: header.alg, kid: header.kid }, payload };
}

function jsonObject(segment: string, what: string): Record<string, unknown> {
  const text = Buffer.from(segment, 'base64url').toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new InvalidTokenError(`${what} not JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidTokenError(`${what} not an object`);
  }
  if (hasDuplicateNames(text)) throw new InvalidTokenError(`${what} has duplicate names`);
  return value as Record<string, unknown>;
}

/**
 * JSON.parse keeps the last of two equal names, so `{"sub":"a","sub":"b"}` would mean different things to
 * different parsers (RFC 7519 4: such a JWT must be rejected). Runs on text JSON.parse already accepted.
 */
export function hasDuplicateNames(json: string): boolean {
  const stack: (Set<string> | null)[] = [];
  for (let i = 0; i < json.length; i++) {
    const c = json[i];
    if (c === '{') stack.push(new Set());
    else if (c === '[') stack.push(null);
    else if (c === '}' || c === ']') stack.pop();
    else if (c === '"') {
      let end = i + 1;
      while (json[end] !== '"') end += json[end] === '\\' ? 2 : 1;
      const names = stack[stack.length - 1];
      let next = end + 1;
      while (next < json.length && ' \t\n\r'.includes(json[next])) next++;
      if (names !== null && names !== undefined && json[next] === ':') {
        // Decoded, so "\u0073ub" and "sub" are the same name.
        const name = JSON.parse(json.slice(i, end + 1)) as string;
        if (names.has(name)) return true;
        names.add(name);
      }
      i = end;
    }
  }
  return false;
}
