import { describe, expect, it } from '@jest/globals';
import { isLoopbackUrl } from './jwt-settings.js';
import { issuerUndiscoverable, loadSettings, SettingsError } from './settings.js';

const prod = {
  NODE_ENV: 'production',
  JWT_JWKS_URI: 'https://issuer.example/jwks',
  JWT_ISSUER: 'https://issuer.example',
  CONTROLLER_HOST_ID: 'h1',
};

describe('loadSettings', () => {
  it('defaults to dev mode with the documented values', () => {
    const s = loadSettings({});
    expect(s).toMatchObject({
      devMode: true,
      databaseUrl: undefined,
      apiPort: 8080,
      controllerPort: 8081,
      controllerHostId: 'dev-host',
      enforceSidHostMatch: true,
      logLevel: 'info',
      jwt: { issuer: 'http://localhost:8080', audience: 'bindery', algorithms: ['RS256', 'ES256', 'PS256'] },
    });
  });

  it('makes the dev issuer the api URL (DESIGN 6.5), and an explicit JWT_ISSUER wins', () => {
    expect(loadSettings({ API_PORT: '9090' }).jwt.issuer).toBe('http://localhost:9090');
    const behindProxy = loadSettings({ API_PORT: '9090', PUBLIC_BASE_URL: 'https://bindery.test/' });
    expect(behindProxy).toMatchObject({
      publicBaseUrl: 'https://bindery.test',
      jwt: { issuer: 'https://bindery.test' },
    });
    expect(loadSettings({ JWT_ISSUER: 'https://auth.example' })).toMatchObject({
      devMode: true,
      publicBaseUrl: 'http://localhost:8080',
      jwt: { issuer: 'https://auth.example' },
    });
  });

  it('uses DATABASE_SESSION_URL for sessions, DATABASE_URL when it is unset (DESIGN 15)', () => {
    const pooled = 'postgres://u@pgbouncer:6432/bindery';
    expect(loadSettings({ DATABASE_URL: pooled }).databaseSessionUrl).toBe(pooled);
    const direct = 'postgres://u@haproxy:5000/bindery';
    expect(loadSettings({ DATABASE_URL: pooled, DATABASE_SESSION_URL: direct })).toMatchObject({
      databaseUrl: pooled,
      databaseSessionUrl: direct,
    });
    expect(loadSettings({}).databaseSessionUrl).toBeUndefined();
  });

  it('leaves dev mode when a key source is set, and then needs an issuer and a host id', () => {
    expect(() => loadSettings({ JWT_JWKS_FILE: '/k.json' })).toThrow('Invalid setting JWT_ISSUER');
    expect(() => loadSettings({ JWT_JWKS_FILE: '/k.json', JWT_ISSUER: 'i' })).toThrow(
      'Invalid setting CONTROLLER_HOST_ID',
    );
    expect(loadSettings({ JWT_JWKS_FILE: '/k.json', JWT_ISSUER: 'i', CONTROLLER_HOST_ID: 'h' }).devMode).toBe(false);
    expect(loadSettings(prod).production).toBe(true);
  });

  it.each([
    [{ API_PORT: 'abc' }, 'API_PORT'],
    [{ CONTROLLER_PORT: '70000' }, 'CONTROLLER_PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'postgres://h/db', DATABASE_SESSION_URL: 'mysql://x' }, 'DATABASE_SESSION_URL'],
    [{ DATABASE_SESSION_URL: 'postgres://h/db' }, 'DATABASE_SESSION_URL'],
    [{ DATABASE_URL: 'postgres://h/db', DATABASE_POOL_MODE: 'statement' }, 'DATABASE_POOL_MODE'],
    [{ DATABASE_URL: 'postgres://h/db', DATABASE_POOL_MODE: 'transaction' }, 'DATABASE_POOL_MODE'],
    [
      { DATABASE_URL: 'postgres://h/db', DATABASE_SESSION_URL: 'postgres://h/db', DATABASE_POOL_MODE: 'transaction' },
      'DATABASE_POOL_MODE',
    ],
    [{ CONFIG_KEYRING_FILE: '/ring', ALLOW_PLAINTEXT_CONFIG: 'true' }, 'ALLOW_PLAINTEXT_CONFIG'],
    [{ ALLOW_PLAINTEXT_CONFIG: 'yes' }, 'ALLOW_PLAINTEXT_CONFIG'],
    [{ CONFIG_HISTORY_MAX_VERSIONS: '19' }, 'CONFIG_HISTORY_MAX_VERSIONS'],
    [{ JWT_JWKS_URI: 'ftp://x' }, 'JWT_JWKS_URI'],
    [
      { JWT_JWKS_URI: 'https://a/jwks', JWT_JWKS_FILE: '/k.json', JWT_ISSUER: 'i', CONTROLLER_HOST_ID: 'h' },
      'JWT_JWKS_FILE',
    ],
    [{ JWT_ALGORITHMS: 'HS256' }, 'JWT_ALGORITHMS'],
    [{ JWT_ALGORITHMS: 'none' }, 'JWT_ALGORITHMS'],
    [{ JWT_ALGORITHMS: 'ES256,EdDSA' }, 'JWT_ALGORITHMS'],
    [{ JWT_ALGORITHMS: ' , ' }, 'JWT_ALGORITHMS'],
    [{ ENFORCE_SID_HOST_MATCH: 'maybe' }, 'ENFORCE_SID_HOST_MATCH'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ NODE_ENV: 'production' }, 'JWT_JWKS_URI'],
    [{ ...prod, ENFORCE_SID_HOST_MATCH: 'false' }, 'ENFORCE_SID_HOST_MATCH'],
  ])('refuses %j with one line naming %s', (env, variable) => {
    let error: unknown;
    try {
      loadSettings(env);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SettingsError);
    const message = (error as Error).message;
    expect(message.startsWith(`Invalid setting ${variable}: `)).toBe(true);
    expect(message).not.toContain('\n');
  });

  it('allows unenforced binding in production only with ALLOW_UNENFORCED_BINDING=true', () => {
    const s = loadSettings({ ...prod, ENFORCE_SID_HOST_MATCH: 'false', ALLOW_UNENFORCED_BINDING: 'true' });
    expect(s.enforceSidHostMatch).toBe(false);
  });

  it('parses algorithms, booleans and trims values', () => {
    const s = loadSettings({ JWT_ALGORITHMS: ' ES256 , PS512 ', ENFORCE_SID_HOST_MATCH: 'FALSE', API_PORT: ' 9000 ' });
    expect(s.jwt.algorithms).toEqual(['ES256', 'PS512']);
    expect(s.enforceSidHostMatch).toBe(false);
    expect(s.apiPort).toBe(9000);
  });

  it('has the documented defaults for the limits, the pool and the proxy', () => {
    expect(loadSettings({})).toMatchObject({
      wsMaxConnections: 10_000,
      wsMaxUnauthenticated: 1000,
      wsAuthTimeoutMs: 5000,
      dbPoolSize: 10,
      dbStatementTimeoutMs: 5000,
      trustProxy: false,
      shutdownTimeoutMs: 25_000,
      registryLeaseMs: 15_000,
      eventsRetentionDays: 30,
      configStore: { historyDays: 365, historyMaxVersions: 1000, allowPlaintext: false, keyringFile: undefined },
    });
    // A small connection cap lowers the default unauthenticated cap with it.
    expect(loadSettings({ WS_MAX_CONNECTIONS: '50' }).wsMaxUnauthenticated).toBe(50);
    expect(loadSettings({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadSettings({ CONFIG_HISTORY_DAYS: '7' }).configStore.historyDays).toBe(7);
    expect(loadSettings({ TOKEN_TTL_SEC: '86400' }).tokenIssuer.ttlSec).toBe(86_400);
  });

  it.each([
    ['WS_MAX_UNAUTHENTICATED', { WS_MAX_CONNECTIONS: '10', WS_MAX_UNAUTHENTICATED: '11' }],
    ['DB_POOL_SIZE', { DB_POOL_SIZE: '0' }],
    ['DB_STATEMENT_TIMEOUT_MS', { DB_STATEMENT_TIMEOUT_MS: 'soon' }],
    ['TRUST_PROXY', { TRUST_PROXY: 'maybe' }],
    ['WS_AUTH_TIMEOUT_MS', { WS_AUTH_TIMEOUT_MS: '-1' }],
    ['REGISTRY_LEASE_MS', { REGISTRY_LEASE_MS: '399' }],
    ['TOKEN_TTL_SEC', { TOKEN_TTL_SEC: '86401' }],
    ['EVENTS_RETENTION_DAYS', { EVENTS_RETENTION_DAYS: '0' }],
    ['CONFIG_HISTORY_DAYS', { CONFIG_HISTORY_DAYS: 'a year' }],
  ])('refuses a bad %s', (variable, env) => {
    expect(() => loadSettings(env)).toThrow(new RegExp(`^Invalid setting ${variable}: `));
  });
});

describe('JWT_JWKS_URI over http: (DESIGN 6.1)', () => {
  const production = (uri: string, extra: Record<string, string> = {}) =>
    loadSettings({ ...prod, JWT_JWKS_URI: uri, ...extra });

  it.each([
    'http://issuer.example/jwks',
    'http://10.0.0.5:8080/jwks',
    'http://localhost.evil.example/jwks',
    'http://127.0.0.1.evil.example/jwks',
  ])('stops a production start-up on %s with one line saying why and how', (uri) => {
    expect(() => production(uri)).toThrow(
      new SettingsError(
        'JWT_JWKS_URI',
        'must be https: with NODE_ENV=production (http: only for loopback, or with JWT_JWKS_ALLOW_HTTP=true on a private network)',
      ),
    );
    expect(() => production(uri, { JWT_JWKS_ALLOW_HTTP: 'false' })).toThrow('Invalid setting JWT_JWKS_URI: ');
  });

  it.each([
    'http://127.0.0.1:9000/jwks',
    'http://127.8.9.10/jwks',
    'http://localhost:9000/jwks',
    'http://LOCALHOST/jwks',
    'http://[::1]:9000/jwks',
    'http://issuer.localhost/jwks',
  ])('accepts loopback %s in production', (uri) => {
    expect(isLoopbackUrl(uri)).toBe(true);
    expect(production(uri).jwt.jwksUri).toBe(uri);
  });

  it('accepts any http: URL with JWT_JWKS_ALLOW_HTTP=true (a private network), and https: always', () => {
    expect(production('http://api:8080/.well-known/jwks.json', { JWT_JWKS_ALLOW_HTTP: 'true' }).jwt.jwksUri).toBe(
      'http://api:8080/.well-known/jwks.json',
    );
    expect(production('https://issuer.example/jwks').jwt.jwksUri).toBe('https://issuer.example/jwks');
    expect(() => production('http://api:8080/jwks', { JWT_JWKS_ALLOW_HTTP: 'maybe' })).toThrow(
      /^Invalid setting JWT_JWKS_ALLOW_HTTP: /,
    );
  });

  it('leaves http: alone outside production', () => {
    const s = loadSettings({ JWT_JWKS_URI: 'http://issuer.example/jwks', JWT_ISSUER: 'i', CONTROLLER_HOST_ID: 'h' });
    expect(s.jwt.jwksUri).toBe('http://issuer.example/jwks');
  });
});

describe('JWT_JWKS_REFRESH_SEC, PUBLIC_BASE_URL, REQUEST_TIMEOUT_MS', () => {
  it('has the documented defaults', () => {
    const s = loadSettings({});
    expect(s.jwt.jwksRefreshSec).toBe(300);
    expect(s.requestTimeoutMs).toBe(30_000);
    expect(s.publicBaseUrl).toBe('http://localhost:8080');
    expect(loadSettings({ API_PORT: '9000' }).publicBaseUrl).toBe('http://localhost:9000');
  });

  it('takes a refresh period and a public URL (without its trailing slash)', () => {
    const s = loadSettings({ JWT_JWKS_REFRESH_SEC: '1', PUBLIC_BASE_URL: 'https://bindery.example/api/' });
    expect(s.jwt.jwksRefreshSec).toBe(1);
    expect(s.publicBaseUrl).toBe('https://bindery.example/api');
  });

  it('requires PUBLIC_BASE_URL in production while the issuer is on, and only then', () => {
    const issuer = { ...prod, JWT_JWKS_URI: '', TOKEN_ISSUER_KEY_FILE: '/issuer.pem' };
    expect(() => loadSettings(issuer)).toThrow(/^Invalid setting PUBLIC_BASE_URL: required with NODE_ENV=production/);
    expect(loadSettings({ ...issuer, PUBLIC_BASE_URL: 'https://bindery.example' }).publicBaseUrl).toBe(
      'https://bindery.example',
    );
    // The issuer is off: the metadata is not served, so nothing needs the URL.
    expect(() => loadSettings(prod)).not.toThrow();
  });

  it.each([
    ['JWT_JWKS_REFRESH_SEC', { JWT_JWKS_REFRESH_SEC: '0' }],
    ['JWT_JWKS_REFRESH_SEC', { JWT_JWKS_REFRESH_SEC: 'often' }],
    ['PUBLIC_BASE_URL', { PUBLIC_BASE_URL: 'bindery.example' }],
    ['PUBLIC_BASE_URL', { PUBLIC_BASE_URL: 'ftp://bindery.example' }],
    ['REQUEST_TIMEOUT_MS', { REQUEST_TIMEOUT_MS: '-5' }],
  ])('refuses a bad %s', (variable, env) => {
    expect(() => loadSettings(env)).toThrow(new RegExp(`^Invalid setting ${variable}: `));
  });
});

describe('PUBLIC_BASE_URL in production (DESIGN 10)', () => {
  const issuerOn = { ...prod, JWT_JWKS_URI: '', TOKEN_ISSUER_KEY_FILE: '/issuer.pem' };
  const production = (base: string, extra: Record<string, string> = {}) =>
    loadSettings({ ...issuerOn, PUBLIC_BASE_URL: base, ...extra });

  it.each([
    'http://bindery.example',
    'http://10.0.0.5:8080',
    'http://localhost.evil.example',
    'http://127.0.0.1.evil.example/api',
  ])('stops a production start-up on %s with one line saying why', (base) => {
    expect(() => production(base)).toThrow(
      new SettingsError(
        'PUBLIC_BASE_URL',
        'must be https: with NODE_ENV=production (http: only for a loopback address): clients send their secrets to its token endpoint',
      ),
    );
    // The issuer off changes nothing: an http: public URL is wrong in production whatever reads it.
    expect(() => loadSettings({ ...prod, PUBLIC_BASE_URL: base })).toThrow('Invalid setting PUBLIC_BASE_URL: ');
    // JWT_JWKS_ALLOW_HTTP is about fetching keys, not about where clients send secrets.
    expect(() => production(base, { JWT_JWKS_ALLOW_HTTP: 'true' })).toThrow('Invalid setting PUBLIC_BASE_URL: ');
  });

  it.each(['http://localhost:8080', 'http://127.0.0.1:8080', 'http://[::1]:8080', 'https://bindery.example'])(
    'accepts %s in production',
    (base) => {
      expect(production(base).publicBaseUrl).toBe(base);
    },
  );

  it('leaves http: alone outside production', () => {
    const s = loadSettings({ ...issuerOn, NODE_ENV: 'test', PUBLIC_BASE_URL: 'http://bindery.example' });
    expect(s.publicBaseUrl).toBe('http://bindery.example');
  });
});

describe('JWT_ISSUER and PUBLIC_BASE_URL (DESIGN 10, RFC 8414 section 3.3)', () => {
  const issuerOn = { ...prod, JWT_JWKS_URI: '', TOKEN_ISSUER_KEY_FILE: '/issuer.pem' };

  it.each([
    ['another host', 'https://auth.example', 'https://bindery.example'],
    ['another path', 'https://bindery.example/auth', 'https://bindery.example'],
    ['http: against https:', 'http://localhost:8080', 'https://localhost:8080'],
    ['not a URL', 'bindery', 'https://bindery.example'],
  ])('a production start with the issuer on must warn when they differ: %s', (_, issuer, base) => {
    expect(issuerUndiscoverable(loadSettings({ ...issuerOn, JWT_ISSUER: issuer, PUBLIC_BASE_URL: base }))).toBe(true);
  });

  it.each([
    ['identical', 'https://bindery.example/api', 'https://bindery.example/api'],
    ['a final slash', 'https://bindery.example/', 'https://bindery.example'],
    ['case of the host', 'https://Bindery.Example', 'https://bindery.example'],
  ])('no warning when they are the same URL: %s', (_, issuer, base) => {
    expect(issuerUndiscoverable(loadSettings({ ...issuerOn, JWT_ISSUER: issuer, PUBLIC_BASE_URL: base }))).toBe(false);
  });

  it('no warning outside production, nor with the issuer off (no metadata is served)', () => {
    const differing = { JWT_ISSUER: 'https://auth.example', PUBLIC_BASE_URL: 'https://bindery.example' };
    expect(issuerUndiscoverable(loadSettings({ ...issuerOn, ...differing, NODE_ENV: 'test' }))).toBe(false);
    expect(issuerUndiscoverable(loadSettings({ ...prod, ...differing }))).toBe(false);
  });
});
