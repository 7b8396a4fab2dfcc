/**
 * Every setting the processes read from the environment, as operators see it: the one source of the
 * settings table in docs/deploy.md (`npm run docs:settings` writes it; test/ops/settings-docs.spec.ts fails
 * when this, the table or the names and defaults `settings.ts` reads differ). Markdown, as shown.
 */
export interface SettingDoc {
  readonly name: string;
  readonly default: string;
  readonly meaning: string;
}

export const SETTINGS_CATALOG: readonly SettingDoc[] = [
  {
    name: 'DATABASE_URL',
    default: 'unset: embedded PostgreSQL in `./.data/postgres`',
    meaning: 'PostgreSQL connection string (`postgres://` or `postgresql://`)',
  },
  {
    name: 'DATABASE_SESSION_URL',
    default: '`DATABASE_URL`',
    meaning:
      'a direct connection (never a transaction pooler) for `LISTEN`, the controller lease and migrations; required with `DATABASE_POOL_MODE=transaction`',
  },
  {
    name: 'DATABASE_POOL_MODE',
    default: '`session`',
    meaning:
      'what `DATABASE_URL` is, declared, never inferred: `session` (PostgreSQL, or a session pooler: named statements, `TimeZone=UTC` and `statement_timeout` sent at connect) or `transaction` (a transaction pooler such as PgBouncer: nothing named, no session state; both set per transaction). `transaction` without a `DATABASE_SESSION_URL` of its own stops start-up',
  },
  {
    name: 'API_PORT',
    default: '`8080`',
    meaning: 'api HTTP port',
  },
  {
    name: 'CONTROLLER_PORT',
    default: '`8081`',
    meaning: 'controller HTTP + WebSocket port',
  },
  {
    name: 'JWT_JWKS_URI',
    default: 'unset',
    meaning:
      'JWKS URL of the token issuer (production); must be `https:` with `NODE_ENV=production` unless it is a loopback address or `JWT_JWKS_ALLOW_HTTP=true`; cached, re-read every `JWT_JWKS_REFRESH_SEC` and on an unknown `kid` (at most every 30 s)',
  },
  {
    name: 'JWT_JWKS_ALLOW_HTTP',
    default: '`false`',
    meaning:
      "allows an `http:` `JWT_JWKS_URI` that is not loopback with `NODE_ENV=production` (a private network, such as compose's)",
  },
  {
    name: 'JWT_JWKS_REFRESH_SEC',
    default: '`300`',
    meaning:
      'the JWKS is re-read at least this often; a key that left it is refused from then on, verifications a process remembered included',
  },
  {
    name: 'JWT_JWKS_FILE',
    default: 'unset',
    meaning: 'a JWKS file or a PEM public key file, instead of a URL',
  },
  {
    name: 'JWT_ISSUER',
    default: '`PUBLIC_BASE_URL` in dev mode, else required',
    meaning:
      "exact expected `iss`; in dev mode the api's URL, so standard OAuth clients can discover the dev issuer (RFC 8414 section 3.3)",
  },
  {
    name: 'JWT_AUDIENCE',
    default: '`bindery`',
    meaning: 'expected `aud` (a string, or one entry of an array `aud`)',
  },
  {
    name: 'JWT_ALGORITHMS',
    default: '`RS256,ES256,PS256`',
    meaning:
      "accepted algorithms: RS/PS/ES 256/384/512, what passport-jwt's verifier (jsonwebtoken) supports; `none`, HMAC and `EdDSA` are refused at start with the reason",
  },
  {
    name: 'JWT_CLOCK_TOLERANCE_SEC',
    default: '`30`',
    meaning: 'leeway for `exp` and `nbf`',
  },
  {
    name: 'CONTROLLER_HOST_ID',
    default: '`dev-host` in dev mode, else required',
    meaning: 'the host this controller serves',
  },
  {
    name: 'ENFORCE_SID_HOST_MATCH',
    default: '`true`',
    meaning:
      'compatibility switch (DESIGN 6.4); `false` logs mismatches with `enforcement disabled` and lets them through; refused with `NODE_ENV=production` unless `ALLOW_UNENFORCED_BINDING=true`',
  },
  {
    name: 'ALLOW_UNENFORCED_BINDING',
    default: '`false`',
    meaning: 'see above',
  },
  {
    name: 'LOG_LEVEL',
    default: '`info`',
    meaning: 'pino level (`fatal`, `error`, `warn`, `info`, `debug`, `trace`, `silent`)',
  },
  {
    name: 'NODE_ENV',
    default: '`development`',
    meaning: '`production` refuses dev mode',
  },
  {
    name: 'RUN_MIGRATIONS',
    default: '`true`',
    meaning:
      'the api applies pending migrations before it serves (under a PostgreSQL advisory lock, so replicas may start together); the controller never migrates',
  },
  {
    name: 'LISTEN_HOST',
    default: '`0.0.0.0`',
    meaning: 'interface both processes listen on',
  },
  {
    name: 'BINDERY_DATA_DIR',
    default: '`./.data`',
    meaning: 'dev key, embedded PostgreSQL data, `npm start` logs',
  },
  {
    name: 'EMBEDDED_POSTGRES_PORT',
    default: '`54329`',
    meaning: 'port of the embedded PostgreSQL',
  },
  {
    name: 'WS_PING_INTERVAL_MS',
    default: '`30000`',
    meaning: 'controller WebSocket ping interval',
  },
  {
    name: 'WS_MAX_CONNECTIONS',
    default: '`10000`',
    meaning: 'open WebSocket connections per controller; the next upgrade is refused with HTTP 503',
  },
  {
    name: 'WS_MAX_UNAUTHENTICATED',
    default: '`1000`',
    meaning:
      'sockets without a verified token yet (a separate, smaller cap, at most `WS_MAX_CONNECTIONS`); beyond it an upgrade without a token is 503',
  },
  {
    name: 'WS_AUTH_TIMEOUT_MS',
    default: '`5000`',
    meaning:
      'a socket with no verified token by then (upgrade header or `params.jwt` of a successful register) is closed with 1008 `Authentication timeout`',
  },
  {
    name: 'DB_POOL_SIZE',
    default: '`10`',
    meaning: 'PostgreSQL connections per process',
  },
  {
    name: 'DB_STATEMENT_TIMEOUT_MS',
    default: '`5000`',
    meaning:
      "`statement_timeout` of every pooled connection (sent at connect); with `DATABASE_POOL_MODE=transaction` set per transaction, statements outside one run under the pooler's; migrations run without it",
  },
  {
    name: 'TRUST_PROXY',
    default: '`false`',
    meaning:
      '`true`: the last `X-Forwarded-For` hop (the one the proxy in front appended) is the client address in logs and `request.ip`; set it only behind a reverse proxy',
  },
  {
    name: 'REQUEST_TIMEOUT_MS',
    default: '`30000`',
    meaning:
      'a request whose headers or body have not arrived by then is answered 408 (or its connection closed), so slow clients cannot hold connections',
  },
  {
    name: 'SHUTDOWN_TIMEOUT_MS',
    default: '`25000`',
    meaning: 'SIGTERM/SIGINT: a process still shutting down after this long exits 1; a second signal exits 1 at once',
  },
  {
    name: 'TOKEN_ISSUER_KEY_FILE',
    default: 'unset',
    meaning:
      'PEM private key(s) of the built-in client-credentials issuer (EC P-256 → ES256, RSA ≥ 2048 → RS256); the first signs, all are published; alone (no `JWT_JWKS_*`) the api trusts exactly these keys',
  },
  {
    name: 'TOKEN_TTL_SEC',
    default: '`900`',
    meaning: 'lifetime of issued access tokens; at most `86400` (a token cannot be revoked before it expires)',
  },
  {
    name: 'PUBLIC_BASE_URL',
    default: '`http://localhost:API_PORT`',
    meaning:
      "the api's public URL, used for the URLs of the issuer metadata (`/.well-known/oauth-authorization-server`), never `Host` or `X-Forwarded-Host`; required with `NODE_ENV=production` while the issuer is on",
  },
  {
    name: 'WS_TOKEN_GRACE_MS',
    default: '`60000`',
    meaning:
      'a controller socket whose token expired this long ago without a `session/refresh` is closed with 1008 `Token expired`',
  },
  {
    name: 'REGISTRY_LEASE_MS',
    default: '`15000`',
    meaning:
      'a controller replica that stops renewing its lease (renewed every quarter of it, by the database clock) this long has its instances marked disconnected by another replica',
  },
  {
    name: 'EVENTS_RETENTION_DAYS',
    default: '`30`',
    meaning:
      'change-feed events older than this are pruned (hourly, by each api process); a cursor older than the oldest kept event answers 410',
  },
  {
    name: 'CONFIG_HISTORY_DAYS',
    default: '`365`',
    meaning: 'config layer versions older than this are pruned, each layer keeping its last 20 (DESIGN 14)',
  },
  {
    name: 'CONFIG_HISTORY_MAX_VERSIONS',
    default: '`1000`',
    meaning:
      'versions per layer beyond this are pruned whatever their age, the oldest in the write that adds one more; at least 20',
  },
  {
    name: 'CONFIG_KEYRING_FILE',
    default: 'unset: generated under `BINDERY_DATA_DIR` (refused with `NODE_ENV=production`)',
    meaning:
      'the key ring for config values at rest (DESIGN 17): `kid: base64(32 bytes)` lines, the first active, mode 0600 or stricter, else the api refuses to start; read by the api, `config:import` and the `keys:*` commands. Every value and file is sealed with it; rotation and backups: docs/config-server.md "Secrets at rest"',
  },
  {
    name: 'ALLOW_PLAINTEXT_CONFIG',
    default: '`false`',
    meaning:
      '`true`: no key ring, config values stored unencrypted (warned at every start); not together with `CONFIG_KEYRING_FILE`',
  },
];

/** The catalog as the rows of a markdown table (variable, default, meaning). */
export function settingsTable(catalog: readonly SettingDoc[] = SETTINGS_CATALOG): string {
  const rows = catalog.map((s) => `| \`${s.name}\` | ${s.default} | ${s.meaning} |`);
  return ['| variable | default | meaning |', '| --- | --- | --- |', ...rows].join('\n');
}
