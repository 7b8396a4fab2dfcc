import { resolve } from 'node:path';
import { configStoreSettings, type ConfigStoreSettings } from './config-store-settings.js';
import { bool, port, positiveInt, SettingsError, text, url, type Env } from './env-values.js';
import { algorithms, isLoopbackUrl, jwksUri, tokenTtlSec, type JwtAlgorithm } from './jwt-settings.js';

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const DEV_HOST_ID = 'dev-host';

export interface Settings {
  readonly nodeEnv: string;
  readonly production: boolean;
  /** True when no key source is configured: a generated ES256 key is trusted. */
  readonly devMode: boolean;
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  /** A connection of its own (LISTEN, session advisory locks, migrations) when DATABASE_URL is a pooler (DESIGN 15). */
  readonly databaseSessionUrl: string | undefined;
  /** What DATABASE_URL is, as the operator declares it: `transaction` names a transaction pooler (DESIGN 15). */
  readonly databasePoolMode: 'session' | 'transaction';
  /** Port of the embedded PostgreSQL used when DATABASE_URL is unset. */
  readonly embeddedPostgresPort: number;
  readonly apiPort: number;
  readonly controllerPort: number;
  /** Interface both processes listen on. */
  readonly listenHost: string;
  readonly runMigrations: boolean;
  readonly jwt: {
    readonly jwksUri: string | undefined;
    readonly jwksFile: string | undefined;
    readonly issuer: string;
    readonly audience: string;
    readonly algorithms: readonly JwtAlgorithm[];
    readonly clockToleranceSec: number;
    /** The JWKS is re-read at least this often; a key that left it is refused from then on (DESIGN 6.1). */
    readonly jwksRefreshSec: number;
  };
  /** The api's public URL: the issuer metadata's URLs (DESIGN 10), never the request's `Host`. */
  readonly publicBaseUrl: string;
  /** A request whose headers or body have not arrived by then is answered 408 or closed (DESIGN 3). */
  readonly requestTimeoutMs: number;
  /** The built-in client-credentials issuer (DESIGN 10): on in dev mode and with TOKEN_ISSUER_KEY_FILE. */
  readonly tokenIssuer: {
    /** PEM private key(s); undefined in dev mode, where the dev key signs. */
    readonly keyFile: string | undefined;
    readonly ttlSec: number;
  };
  readonly controllerHostId: string;
  readonly enforceSidHostMatch: boolean;
  readonly allowUnenforcedBinding: boolean;
  readonly wsPingIntervalMs: number;
  /** Open WebSocket connections per controller; the next upgrade is refused with 503. */
  readonly wsMaxConnections: number;
  /** Sockets still without a verified token; a separate, smaller cap. */
  readonly wsMaxUnauthenticated: number;
  /** A socket with no verified token by then is closed with 1008. */
  readonly wsAuthTimeoutMs: number;
  /** A socket whose token expired this long ago without a `session/refresh` is closed with 1008. */
  readonly wsTokenGraceMs: number;
  /** A controller replica that stops renewing its lease this long is reaped by another (DESIGN 8.1). */
  readonly registryLeaseMs: number;
  /** Change-feed events older than this many days are pruned (DESIGN 12). */
  readonly eventsRetentionDays: number;
  /** Config history and the key ring its values are encrypted with (DESIGN 14, 17). */
  readonly configStore: ConfigStoreSettings;
  /** PostgreSQL connections per process. */
  readonly dbPoolSize: number;
  /** Server-side `statement_timeout` of every pooled connection (migrations run without it). */
  readonly dbStatementTimeoutMs: number;
  /** The last `X-Forwarded-For` hop (the address the proxy saw) is the client address. */
  readonly trustProxy: boolean;
  /** SIGTERM/SIGINT: after this long the process exits non-zero whatever is still running. */
  readonly shutdownTimeoutMs: number;
  readonly logLevel: LogLevel;
}

/** DATABASE_SESSION_URL, else DATABASE_URL; alone it would point sessions elsewhere than the embedded server. */
function databaseSessionUrl(env: Env): string | undefined {
  const session = url(env, 'DATABASE_SESSION_URL', ['postgres:', 'postgresql:']);
  const pooled = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  if (session !== undefined && pooled === undefined)
    throw new SettingsError('DATABASE_SESSION_URL', 'needs DATABASE_URL');
  return session ?? pooled;
}

/** DATABASE_POOL_MODE; `transaction` keeps no session, so LISTEN and migrations need DATABASE_SESSION_URL. */
function databasePoolMode(env: Env): 'session' | 'transaction' {
  const mode = text(env, 'DATABASE_POOL_MODE') ?? 'session';
  if (mode !== 'session' && mode !== 'transaction') {
    throw new SettingsError('DATABASE_POOL_MODE', `must be session or transaction, not "${mode}"`);
  }
  const session = text(env, 'DATABASE_SESSION_URL');
  if (mode === 'transaction' && (session === undefined || session === text(env, 'DATABASE_URL'))) {
    throw new SettingsError(
      'DATABASE_POOL_MODE',
      'transaction needs DATABASE_SESSION_URL, a direct connection for LISTEN, the controller lease and migrations ' +
        '(a transaction pooler would silently lose notifications)',
    );
  }
  return mode;
}

/** DESIGN 10: required in production while the issuer is on, and https: there (clients send secrets to it). */
function publicBaseUrl(env: Env, issuerOn: boolean, production: boolean, apiPort: number): string {
  const value = url(env, 'PUBLIC_BASE_URL', ['https:', 'http:']);
  if (value !== undefined && production && new URL(value).protocol !== 'https:' && !isLoopbackUrl(value)) {
    throw new SettingsError(
      'PUBLIC_BASE_URL',
      'must be https: with NODE_ENV=production (http: only for a loopback address): clients send their secrets to its token endpoint',
    );
  }
  if (value !== undefined) return value.replace(/\/+$/, '');
  if (issuerOn && production) {
    throw new SettingsError('PUBLIC_BASE_URL', 'required with NODE_ENV=production while the token issuer is on');
  }
  return `http://localhost:${apiPort}`;
}

/** A URL compared as clients would: parsed (case of scheme and host, default port) and without a final slash. */
function comparableUrl(raw: string): string {
  try {
    return new URL(raw).href.replace(/\/+$/, '');
  } catch {
    return raw;
  }
}

export const ISSUER_DISCOVERY_WARNING =
  'JWT_ISSUER differs from PUBLIC_BASE_URL: standard OAuth clients cannot discover this issuer, since its metadata ' +
  'is served under PUBLIC_BASE_URL and must name the issuer it is served for (RFC 8414 section 3.3)';

/** DESIGN 10: whether a production start must warn that the issuer's metadata cannot be discovered. */
export function issuerUndiscoverable(settings: Settings): boolean {
  const issuerOn = settings.devMode || settings.tokenIssuer.keyFile !== undefined;
  if (!settings.production || !issuerOn) return false;
  return comparableUrl(settings.jwt.issuer) !== comparableUrl(settings.publicBaseUrl);
}

/** Renewals run every quarter of it: below 400 ms a replica would spend its time renewing. */
function registryLeaseMs(env: Env): number {
  const value = positiveInt(env, 'REGISTRY_LEASE_MS', 15_000);
  if (value < 400) throw new SettingsError('REGISTRY_LEASE_MS', `must be at least 400 (got ${value})`);
  return value;
}

/** Reads and validates every setting at once; throws a SettingsError naming the first bad variable. */
export function loadSettings(env: Env = process.env): Settings {
  const nodeEnv = text(env, 'NODE_ENV') ?? 'development';
  const production = nodeEnv === 'production';
  const jwksUriValue = jwksUri(env, production);
  const jwksFile = text(env, 'JWT_JWKS_FILE');
  if (jwksUriValue !== undefined && jwksFile !== undefined) {
    throw new SettingsError('JWT_JWKS_FILE', 'set either JWT_JWKS_URI or JWT_JWKS_FILE, not both');
  }
  const issuerKeyFile = text(env, 'TOKEN_ISSUER_KEY_FILE');
  const devMode = jwksUriValue === undefined && jwksFile === undefined && issuerKeyFile === undefined;
  if (devMode && production) {
    throw new SettingsError(
      'JWT_JWKS_URI',
      'required when NODE_ENV=production unless TOKEN_ISSUER_KEY_FILE is set (dev mode is refused)',
    );
  }
  const explicitIssuer = text(env, 'JWT_ISSUER');
  if (explicitIssuer === undefined && !devMode) {
    throw new SettingsError('JWT_ISSUER', 'required when a key source is configured');
  }
  const apiPort = port(env, 'API_PORT', 8080);
  const baseUrl = publicBaseUrl(env, devMode || issuerKeyFile !== undefined, production, apiPort);
  // DESIGN 6.5: the dev issuer is the api's URL, so standard OAuth clients can discover it (RFC 8414 section 3.3).
  const issuer = explicitIssuer ?? baseUrl;
  const controllerHostId = text(env, 'CONTROLLER_HOST_ID') ?? (devMode ? DEV_HOST_ID : undefined);
  if (controllerHostId === undefined) {
    throw new SettingsError('CONTROLLER_HOST_ID', 'required when a key source is configured');
  }
  const enforceSidHostMatch = bool(env, 'ENFORCE_SID_HOST_MATCH', true);
  const allowUnenforcedBinding = bool(env, 'ALLOW_UNENFORCED_BINDING', false);
  if (!enforceSidHostMatch && production && !allowUnenforcedBinding) {
    throw new SettingsError(
      'ENFORCE_SID_HOST_MATCH',
      'false is refused with NODE_ENV=production unless ALLOW_UNENFORCED_BINDING=true',
    );
  }
  const logLevel = (text(env, 'LOG_LEVEL') ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new SettingsError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')} (got "${env.LOG_LEVEL}")`);
  }
  const wsMaxConnections = positiveInt(env, 'WS_MAX_CONNECTIONS', 10_000);
  const wsMaxUnauthenticated = positiveInt(env, 'WS_MAX_UNAUTHENTICATED', Math.min(1000, wsMaxConnections));
  if (wsMaxUnauthenticated > wsMaxConnections) {
    throw new SettingsError('WS_MAX_UNAUTHENTICATED', `must not exceed WS_MAX_CONNECTIONS (${wsMaxConnections})`);
  }
  return {
    nodeEnv,
    production,
    devMode,
    dataDir: resolve(text(env, 'BINDERY_DATA_DIR') ?? '.data'),
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    databaseSessionUrl: databaseSessionUrl(env),
    databasePoolMode: databasePoolMode(env),
    embeddedPostgresPort: port(env, 'EMBEDDED_POSTGRES_PORT', 54329),
    apiPort,
    controllerPort: port(env, 'CONTROLLER_PORT', 8081),
    listenHost: text(env, 'LISTEN_HOST') ?? '0.0.0.0',
    runMigrations: bool(env, 'RUN_MIGRATIONS', true),
    jwt: {
      jwksUri: jwksUriValue,
      jwksFile: jwksFile === undefined ? undefined : resolve(jwksFile),
      issuer,
      audience: text(env, 'JWT_AUDIENCE') ?? 'bindery',
      algorithms: algorithms(env),
      clockToleranceSec: positiveInt(env, 'JWT_CLOCK_TOLERANCE_SEC', 30),
      jwksRefreshSec: positiveInt(env, 'JWT_JWKS_REFRESH_SEC', 300),
    },
    publicBaseUrl: baseUrl,
    requestTimeoutMs: positiveInt(env, 'REQUEST_TIMEOUT_MS', 30_000),
    tokenIssuer: {
      keyFile: issuerKeyFile === undefined ? undefined : resolve(issuerKeyFile),
      ttlSec: tokenTtlSec(env),
    },
    controllerHostId,
    enforceSidHostMatch,
    allowUnenforcedBinding,
    wsPingIntervalMs: positiveInt(env, 'WS_PING_INTERVAL_MS', 30_000),
    wsMaxConnections,
    wsMaxUnauthenticated,
    wsAuthTimeoutMs: positiveInt(env, 'WS_AUTH_TIMEOUT_MS', 5000),
    wsTokenGraceMs: positiveInt(env, 'WS_TOKEN_GRACE_MS', 60_000),
    registryLeaseMs: registryLeaseMs(env),
    eventsRetentionDays: positiveInt(env, 'EVENTS_RETENTION_DAYS', 30),
    configStore: configStoreSettings(env),
    dbPoolSize: positiveInt(env, 'DB_POOL_SIZE', 10),
    dbStatementTimeoutMs: positiveInt(env, 'DB_STATEMENT_TIMEOUT_MS', 5000),
    trustProxy: bool(env, 'TRUST_PROXY', false),
    shutdownTimeoutMs: positiveInt(env, 'SHUTDOWN_TIMEOUT_MS', 25_000),
    logLevel: logLevel as LogLevel,
  };
}
export { SettingsError } from './env-values.js';
