import { checkRuntimeClaims, decodeToken, RuntimeTokenError, type RuntimeIdentity } from './claims.js';
import { causeOf } from './events.js';

export interface TokenSourceOptions {
  readonly tokenEndpoint: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly identity: RuntimeIdentity;
  readonly scope?: string | undefined;
  /** Renew when less than this share of the lifetime is left (default 0.2). */
  readonly renewAtRemaining?: number;
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
}

interface Held {
  readonly token: string;
  readonly exp: number;
  readonly renewAt: number;
}

/** Client-credentials tokens for one runtime, checked against its identity and renewed before expiry. */
export class TokenSource {
  private held: Held | undefined;
  private inFlight: Promise<Held> | undefined;
  private readonly fetchImpl: typeof fetch;
  private readonly now: () => number;

  constructor(private readonly options: TokenSourceOptions) {
    this.fetchImpl = options.fetch ?? fetch;
    this.now = options.now ?? Date.now;
  }

  /** A current token; fetches or renews as needed, and throws RuntimeTokenError for a token of the wrong profile. */
  async token(): Promise<string> {
    const held = this.held;
    if (held !== undefined && this.now() < held.renewAt) return held.token;
    if (held !== undefined && this.now() < held.exp * 1000 - 5_000) {
      void this.renew().catch(() => undefined); // renew early in the background; the held one still serves
      return held.token;
    }
    return (await this.renew()).token;
  }

  /** A newly issued token, whatever is held: `session/refresh` needs a later expiry than the socket's. */
  async renewed(): Promise<string> {
    return (await this.renew()).token;
  }

  /** When (epoch ms) the token last obtained is due for renewal. */
  get renewAt(): number | undefined {
    return this.held?.renewAt;
  }

  private renew(): Promise<Held> {
    this.inFlight ??= this.fetchToken().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async fetchToken(): Promise<Held> {
    const { identity } = this.options;
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (this.options.scope !== undefined) form.set('scope', this.options.scope);
    if (identity.envTag !== undefined && identity.envTag.trim() !== '') form.set('env', identity.envTag.trim());
    const basic = Buffer.from(
      `${encodeURIComponent(this.options.clientId)}:${encodeURIComponent(this.options.clientSecret)}`,
    ).toString('base64');
    const response = await this.fetchImpl(this.options.tokenEndpoint, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
      signal: AbortSignal.timeout(10_000),
    }).catch((error: unknown) => {
      throw new RuntimeTokenError('token', `token endpoint unreachable: ${causeOf(error)}`);
    });
    const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
    if (!response.ok || typeof body.access_token !== 'string') {
      // The RFC 6749 error code and the status name the cause: invalid_client (401) is a wrong secret.
      const error = typeof body.error === 'string' ? `${body.error} (${response.status})` : `HTTP ${response.status}`;
      throw new RuntimeTokenError('token', `token endpoint refused: ${error}`);
    }
    const token = body.access_token;
    const { claims, exp } = decodeToken(token);
    checkRuntimeClaims(claims, identity);
    const iat = typeof claims.iat === 'number' ? claims.iat : Math.floor(this.now() / 1000);
    const lifetimeMs = Math.max(0, exp - iat) * 1000;
    const held = { token, exp, renewAt: exp * 1000 - lifetimeMs * (this.options.renewAtRemaining ?? 0.2) };
    this.held = held;
    return held;
  }
}
