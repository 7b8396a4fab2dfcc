import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { OAuthClientRepository, type ClientCredentials } from '#database';
import { hasControlChars, isFormBody, SETTINGS, type Settings } from '#platform';
import { IssuerKeyRing } from '#token-binding';
import { FailureLimiter, type Attempt } from './failure-limiter.js';
import { SecretChecker, TooManyChecksError } from './client-secrets.js';
import { isClientId } from './client-id.js';
import { invalidClient, invalidRequest, oauthError } from './oauth-errors.js';

export const ISSUER_KEYS = Symbol('ISSUER_KEYS');

/** The 200 answer of `POST /oauth2/token` (RFC 6749 5.1). */
export interface TokenAnswer {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  readonly expires_in: number;
  readonly scope: string;
}

/** Fields the endpoint reads; anything else in the form (`sid=`, `host=`, `sub=`) is ignored, never copied. */
const SINGLE_FIELDS = ['grant_type', 'scope', 'env', 'client_id', 'client_secret'] as const;
type Field = (typeof SINGLE_FIELDS)[number];

interface ClientAuthentication {
  readonly clientId: string;
  readonly secret: string;
}

/**
 * The client-credentials grant (DESIGN 10): authenticates the client, applies its scopes and envs, and
 * signs an RFC 9068 access token whose `host` and `sid` come from the client record only.
 */
@Injectable()
export class TokenIssuerService {
  private readonly logger = new Logger('TokenIssuer');

  constructor(
    private readonly clients: OAuthClientRepository,
    private readonly checker: SecretChecker,
    private readonly limiter: FailureLimiter,
    @Inject(ISSUER_KEYS) private readonly keys: IssuerKeyRing,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  async issue(form: unknown, authorization: string | undefined, address: string): Promise<TokenAnswer> {
    const fields = formFields(form);
    const grant = fields.grant_type;
    if (grant === undefined) throw invalidRequest('grant_type is required');
    if (grant !== 'client_credentials') {
      throw oauthError(400, 'unsupported_grant_type', 'Only grant_type=client_credentials is supported');
    }
    const auth = clientAuthentication(fields, authorization);
    const client = await this.authenticate(auth, await this.admit(auth.clientId, address), address);
    const scopes = grantedScopes(fields.scope, client.client.scopes);
    const env = fields.env;
    if (env !== undefined && !client.client.envs.includes(env)) {
      throw invalidRequest(`env ${JSON.stringify(env)} is not one of this client's envs`);
    }
    const { clientId, host, sid } = client.client;
    const claims = {
      sub: clientId,
      client_id: clientId,
      ...(host === null ? {} : { host }),
      ...(sid === null ? {} : { sid }),
      ...(env === undefined ? {} : { env }),
      scope: scopes.join(' '),
    };
    const ttlSec = this.settings.tokenIssuer.ttlSec;
    const token = await this.keys.sign(claims, {
      issuer: this.settings.jwt.issuer,
      audience: this.settings.jwt.audience,
      ttlSec,
      jti: randomUUID(),
    });
    this.logger.log({ clientId, scope: claims.scope, env: env ?? null }, 'token issued');
    return { access_token: token, token_type: 'Bearer', expires_in: ttlSec, scope: claims.scope };
  }

  /** Existing and made-up ids take the same path, cost and answer: only the secret check tells them apart. */
  private async authenticate(
    auth: ClientAuthentication,
    attempt: Attempt,
    address: string,
  ): Promise<ClientCredentials> {
    let credentials: ClientCredentials | null;
    let matched: boolean;
    try {
      // Text no client id can be (the rule records are created under) needs no lookup: an unknown client.
      credentials = isClientId(auth.clientId) ? await this.clients.credentials(auth.clientId) : null;
      // The checker computes as many hashes for no client as for one in rotation grace.
      matched = await this.checker.matchesAny(auth.secret, credentials?.secretHashes ?? []);
    } catch (error) {
      attempt.abandoned();
      if (!(error instanceof TooManyChecksError)) throw error;
      throw oauthError(503, 'temporarily_unavailable', 'Too many token requests at once; retry shortly', {
        'retry-after': '1',
      });
    }
    if (credentials === null || !matched) {
      attempt.failed();
      // Only a stored client's id: a caller's text may be its secret sent in the wrong field.
      const clientId = credentials === null ? '(unknown)' : credentials.client.clientId;
      this.logger.warn({ clientId, address }, 'client authentication failed');
      throw invalidClient();
    }
    attempt.succeeded();
    return credentials;
  }

  /**
   * 429 for a pair or address locked by failures, 503 while its attempts in flight fill the address's allowance,
   * both before any lookup or hash, so a refusal costs nothing and tells nothing.
   */
  private async admit(clientId: string, address: string): Promise<Attempt> {
    let admitted = this.limiter.admit(clientId, address);
    // Beyond the pair's allowance an attempt waits for one of its pair's in flight (DESIGN 10: ten failures).
    while ('settled' in admitted && admitted.settled !== undefined) {
      await admitted.settled;
      admitted = this.limiter.admit(clientId, address);
    }
    if (!('retryAfter' in admitted)) return admitted;
    const headers = { 'retry-after': String(admitted.retryAfter) };
    if (admitted.busy) {
      throw oauthError(503, 'temporarily_unavailable', 'Too many token requests at once; retry shortly', headers);
    }
    throw oauthError(
      429,
      'invalid_client',
      `Too many failed authentications; retry after ${admitted.retryAfter} s`,
      headers,
    );
  }
}

/** The form's known fields, each sent at most once (RFC 6749 3.2); a JSON body of any shape, or none, is refused. */
function formFields(form: unknown): Partial<Record<Field, string>> {
  if (!isFormBody(form)) throw invalidRequest('The body must be application/x-www-form-urlencoded');
  const fields: Partial<Record<Field, string>> = {};
  for (const name of SINGLE_FIELDS) {
    const values = form[name];
    if (values === undefined) continue;
    if (values.length > 1) throw invalidRequest(`${name} must not be repeated`);
    const value = values[0];
    if (value !== undefined && value !== '') fields[name] = value;
  }
  return fields;
}

/** client_secret_basic or client_secret_post, never both (RFC 6749 2.3.1). */
function clientAuthentication(
  fields: Partial<Record<Field, string>>,
  authorization: string | undefined,
): ClientAuthentication {
  const inForm = fields.client_id !== undefined || fields.client_secret !== undefined;
  // Any Basic credential is client_secret_basic, even one that does not parse: never dropped for the form's.
  if (/^Basic(?:[ \t]|$)/i.test(authorization ?? '')) {
    if (inForm) throw invalidRequest('Use one client authentication method, not both');
    const basic = /^Basic[ \t]+([A-Za-z0-9+/]+=*)[ \t]*$/i.exec(authorization ?? '');
    if (basic === null) throw invalidClient();
    const decoded = Buffer.from(basic[1] ?? '', 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon <= 0) throw invalidClient();
    let auth: ClientAuthentication;
    try {
      // RFC 6749 2.3.1: both parts are form-urlencoded before they are joined.
      auth = {
        clientId: decodeURIComponent(decoded.slice(0, colon).replaceAll('+', ' ')),
        secret: decodeURIComponent(decoded.slice(colon + 1).replaceAll('+', ' ')),
      };
    } catch {
      throw invalidClient();
    }
    return { ...auth, clientId: checkedClientId(auth.clientId) };
  }
  if (fields.client_id === undefined || fields.client_secret === undefined) throw invalidClient();
  return { clientId: checkedClientId(fields.client_id), secret: fields.client_secret };
}

/** A client id with a control character (NUL would make PostgreSQL fail the lookup) is 400 before any SQL. */
function checkedClientId(clientId: string): string {
  if (hasControlChars(clientId)) throw invalidRequest('client_id must not contain control characters');
  return clientId;
}

/** The requested scopes (default: all of the client's), each of which the client must have. */
function grantedScopes(requested: string | undefined, allowed: readonly string[]): string[] {
  if (requested === undefined) return [...allowed];
  const scopes = [...new Set(requested.split(' ').filter((s) => s !== ''))];
  const extra = scopes.filter((s) => !allowed.includes(s));
  if (scopes.length === 0 || extra.length > 0) {
    throw oauthError(400, 'invalid_scope', `Not granted to this client: ${extra.join(' ') || '(empty scope)'}`);
  }
  return scopes;
}
