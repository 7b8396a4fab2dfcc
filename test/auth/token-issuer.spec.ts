import { operatorPrincipal } from '#token-binding';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { callers, ISSUER, writeIssuerKeyFile } from '../support/tokens.js';
import { sqlDuring, startApi, unique, type TestApi } from '../support/api.js';
import { run } from '../support/processes.js';

const keys = writeIssuerKeyFile();
const PUBLIC = 'https://bindery.example/auth';
let api: TestApi;
let admin: string;

beforeAll(async () => {
  // The issuer alone: the api trusts exactly its keys (no JWKS file, not dev mode).
  // Behind a proxy (TRUST_PROXY=true), where X-Forwarded-Host would be believed if anything read it.
  api = await startApi({
    JWT_JWKS_FILE: '',
    TOKEN_ISSUER_KEY_FILE: keys.file,
    TOKEN_TTL_SEC: '600',
    PUBLIC_BASE_URL: PUBLIC,
    TRUST_PROXY: 'true',
  });
  admin = await bootstrapAdmin();
});
afterAll(() => api.close());

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

async function tokenRequest(
  form: Record<string, string>,
  headers: Record<string, string> = {},
  remoteAddress = '10.9.0.1',
) {
  return api.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    payload: new URLSearchParams(form).toString(),
    remoteAddress,
  });
}

/** The first operator client comes from the command line in real life; here straight through the service. */
async function bootstrapAdmin(): Promise<string> {
  const { ClientsService } = await import('../../apps/api/token-issuer/clients.service.js');
  const created = await api.app
    .get(ClientsService)
    .create(operatorPrincipal('test'), { clientId: unique('ops'), scopes: ['portal.admin'], envs: [] });
  const res = await tokenRequest(
    { grant_type: 'client_credentials' },
    { authorization: basic(created.clientId, created.clientSecret) },
  );
  expect(res.statusCode).toBe(200);
  return res.json<{ access_token: string }>().access_token;
}

async function createClient(body: Record<string, unknown>) {
  return api.app.inject({
    method: 'POST',
    url: '/oauth2/clients',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    payload: body,
  });
}

async function runtimeClient(extra: Record<string, unknown> = {}) {
  const res = await createClient({ host: 'h-iss', sid: unique('svc'), envs: ['prod'], scopes: ['portal.r'], ...extra });
  expect(res.statusCode).toBe(201);
  return res.json<{ clientId: string; clientSecret: string; sid: string; host: string }>();
}

describe('client records (portal.admin)', () => {
  it('creates a runtime client, shows its 256-bit secret once, and never again', async () => {
    const client = await runtimeClient({ description: 'petstore in prod' });
    expect(client.clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const got = await api.app.inject({
      method: 'GET',
      url: `/oauth2/clients/${client.clientId}`,
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(got.statusCode).toBe(200);
    expect(got.json()).toMatchObject({
      clientId: client.clientId,
      host: 'h-iss',
      sid: client.sid,
      envs: ['prod'],
      scopes: ['portal.r'],
    });
    expect(got.body).not.toContain(client.clientSecret);
    expect(got.body).not.toContain('scrypt');
    const list = await api.app.inject({
      method: 'GET',
      url: '/oauth2/clients?limit=1',
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(list.json<{ total: number; clients: unknown[] }>().clients).toHaveLength(1);
  });

  it('answers that carry a secret (create, rotate) are Cache-Control: no-store', async () => {
    const created = await createClient({ host: 'h-iss', sid: unique('svc'), scopes: ['portal.r'] });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toHaveProperty('clientSecret');
    expect(created.headers['cache-control']).toBe('no-store');
    expect(created.headers.pragma).toBe('no-cache');
    const rotated = await api.app.inject({
      method: 'POST',
      url: `/oauth2/clients/${created.json<{ clientId: string }>().clientId}/secret`,
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      payload: {},
    });
    expect(rotated.statusCode).toBe(200);
    expect(rotated.json()).toHaveProperty('clientSecret');
    expect(rotated.headers['cache-control']).toBe('no-store');
    expect(rotated.headers.pragma).toBe('no-cache');
  });

  it('refuses a runtime client without host or sid; an operator client may have neither', async () => {
    const res = await createClient({ sid: 'x', scopes: ['portal.r'] });
    expect(res.statusCode).toBe(400);
    expect(res.json<{ errors: { field: string }[] }>().errors.map((e) => e.field)).toEqual(['host']);
    expect((await createClient({ scopes: ['portal.admin'] })).statusCode).toBe(201);
  });

  it('answers a taken clientId with 409, a runtime token 403 and a token of another issuer 401', async () => {
    const client = await runtimeClient();
    const taken = await createClient({ clientId: client.clientId, host: 'h', sid: 's', scopes: ['portal.r'] });
    expect(taken.statusCode).toBe(409);
    const issued = await tokenRequest(
      { grant_type: 'client_credentials' },
      { authorization: basic(client.clientId, client.clientSecret) },
    );
    const runtime = issued.json<{ access_token: string }>().access_token;
    const headers = (jwt: string) => ({ authorization: `Bearer ${jwt}` });
    expect(
      (await api.app.inject({ method: 'GET', url: '/oauth2/clients', headers: headers(runtime) })).statusCode,
    ).toBe(403);
    // This api trusts only its own issuer's keys.
    const foreign = await callers.admin();
    expect(
      (await api.app.inject({ method: 'GET', url: '/oauth2/clients', headers: headers(foreign) })).statusCode,
    ).toBe(401);
  });
});

describe('POST /oauth2/token', () => {
  it('issues an RFC 9068 token with host and sid from the record, signed by the first key', async () => {
    const client = await runtimeClient();
    const res = await tokenRequest(
      { grant_type: 'client_credentials' },
      { authorization: basic(client.clientId, client.clientSecret) },
    );
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const answer = res.json<{ access_token: string; token_type: string; expires_in: number; scope: string }>();
    expect(answer).toMatchObject({ token_type: 'Bearer', expires_in: 600, scope: 'portal.r' });
    expect(decodeProtectedHeader(answer.access_token)).toMatchObject({ typ: 'at+jwt', kid: keys.kids[0] });
    const jwks = (await api.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json<{
      keys: { kid: string }[];
    }>();
    expect(jwks.keys.map((k) => k.kid)).toEqual(keys.kids);
    const { payload } = await jwtVerify(answer.access_token, createLocalJWKSet(jwks as never), {
      issuer: ISSUER,
      audience: 'bindery',
    });
    expect(payload).toMatchObject({
      sub: client.clientId,
      client_id: client.clientId,
      host: 'h-iss',
      sid: client.sid,
      scope: 'portal.r',
    });
    expect(payload.env).toBeUndefined();
    expect(typeof payload.jti).toBe('string');
    expect((payload.exp ?? 0) - (payload.iat ?? 0)).toBe(600);
    // The api accepts its own issuer's token.
    const tags = await api.app.inject({
      method: 'GET',
      url: '/tags',
      headers: { authorization: `Bearer ${answer.access_token}` },
    });
    expect(tags.statusCode).toBe(200);
  });

  it('client_secret_post with env and a scope subset; fields that try to set host, sid or sub are ignored', async () => {
    const client = await runtimeClient({ scopes: ['portal.r', 'portal.w'] });
    const res = await tokenRequest({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.clientSecret,
      env: 'prod',
      scope: 'portal.r',
      sid: 'other',
      host: 'other',
      sub: 'other',
    });
    expect(res.statusCode).toBe(200);
    const token = res.json<{ access_token: string }>().access_token;
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<
      string,
      unknown
    >;
    expect(payload).toMatchObject({
      host: 'h-iss',
      sid: client.sid,
      sub: client.clientId,
      env: 'prod',
      scope: 'portal.r',
    });
  });

  it.each([
    ['an env the client may not use', { env: 'dev' }, 400, 'invalid_request'],
    ['a scope the client does not have', { scope: 'portal.admin' }, 400, 'invalid_scope'],
    ['another grant type', { grant_type: 'password' }, 400, 'unsupported_grant_type'],
    ['a repeated field', { env: 'prod&env=prod' }, 400, 'invalid_request'],
  ] as const)('%s: %s', async (_, extra, status, error) => {
    const client = await runtimeClient();
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    for (const [k, v] of Object.entries(extra)) form.set(k, v);
    const payload = form.toString().replace('env=prod%26env%3Dprod', 'env=prod&env=prod');
    const res = await api.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload,
    });
    expect(res.statusCode).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toMatchObject({ error });
  });

  it('a wrong secret or an unknown client is 401 invalid_client with the Basic challenge', async () => {
    const client = await runtimeClient();
    for (const auth of [basic(client.clientId, 'wrong'), basic('no-such-client', client.clientSecret)]) {
      const res = await tokenRequest({ grant_type: 'client_credentials' }, { authorization: auth });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Basic realm="bindery"');
      expect(res.json()).toMatchObject({ error: 'invalid_client' });
    }
  });

  it('ten failures from one address lock that client id there (429), never from another address', async () => {
    const client = await runtimeClient();
    for (let i = 0; i < 10; i++) {
      const res = await tokenRequest(
        { grant_type: 'client_credentials' },
        { authorization: basic(client.clientId, `wrong-${i}`) },
        '10.9.9.9',
      );
      expect(res.statusCode).toBe(401);
    }
    const locked = await tokenRequest(
      { grant_type: 'client_credentials' },
      { authorization: basic(client.clientId, client.clientSecret) },
      '10.9.9.9',
    );
    expect(locked.statusCode).toBe(429);
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(0);
    const elsewhere = await tokenRequest(
      { grant_type: 'client_credentials' },
      { authorization: basic(client.clientId, client.clientSecret) },
      '10.9.9.10',
    );
    expect(elsewhere.statusCode).toBe(200);
  });

  it('rotation: the new secret works at once, the old one only for graceSec; a deleted client gets no token', async () => {
    const client = await runtimeClient();
    const rotate = (graceSec: number) =>
      api.app.inject({
        method: 'POST',
        url: `/oauth2/clients/${client.clientId}/secret`,
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        payload: { graceSec },
      });
    const withGrace = await rotate(60);
    expect(withGrace.statusCode).toBe(200);
    const second = withGrace.json<{ clientSecret: string }>().clientSecret;
    const status = async (secret: string) =>
      (
        await tokenRequest(
          { grant_type: 'client_credentials' },
          { authorization: basic(client.clientId, secret) },
          '10.9.1.1',
        )
      ).statusCode;
    expect(await status(second)).toBe(200);
    expect(await status(client.clientSecret)).toBe(200);
    const third = (await rotate(0)).json<{ clientSecret: string }>().clientSecret;
    expect(await status(third)).toBe(200);
    expect(await status(second)).toBe(401);
    expect((await rotate(86_401)).statusCode).toBe(400);
    const deleted = await api.app.inject({
      method: 'DELETE',
      url: `/oauth2/clients/${client.clientId}`,
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(deleted.statusCode).toBe(204);
    expect(await status(third)).toBe(401);
  });

  it('serves RFC 8414 metadata without an authorization endpoint, its URLs from PUBLIC_BASE_URL', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      issuer: ISSUER,
      token_endpoint: `${PUBLIC}/oauth2/token`,
      jwks_uri: `${PUBLIC}/.well-known/jwks.json`,
      grant_types_supported: ['client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      response_types_supported: [],
    });
  });

  it.each([
    ['Host', { host: 'evil.example' }],
    ['X-Forwarded-Host and -Proto', { 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'http' }],
    ['all of them', { host: 'evil.example:8443', 'x-forwarded-host': 'evil.example', 'x-forwarded-for': '10.1.1.1' }],
  ])('a forged %s changes nothing in the metadata (a cache would serve it to everyone)', async (_, headers) => {
    const honest = await api.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    const forged = await api.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server', headers });
    expect(forged.statusCode).toBe(200);
    expect(forged.body).toBe(honest.body);
    expect(forged.body).not.toContain('evil');
  });

  it.each([
    ['NUL', '\u0000'],
    ['ESC', '\u001b'],
    ['DEL', '\u007f'],
    ['TAB', '\t'],
    ['LF', '\n'],
  ])('a client_id with %s is 400 invalid_request in both methods, before any SQL', async (_, control) => {
    const client = await runtimeClient();
    const ids = [`${control}`, `${client.clientId}${control}`, `x${control}y`];
    const rawBasic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
    const attempts = ids.flatMap((id) => [
      () => tokenRequest({ grant_type: 'client_credentials' }, { authorization: basic(id, client.clientSecret) }),
      // Not percent-encoded: the raw byte inside the Basic credential.
      () => tokenRequest({ grant_type: 'client_credentials' }, { authorization: rawBasic(id, client.clientSecret) }),
      () => tokenRequest({ grant_type: 'client_credentials', client_id: id, client_secret: client.clientSecret }),
    ]);
    for (const attempt of attempts) {
      const { result: res, queries } = await sqlDuring(attempt);
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json()).toEqual({
        error: 'invalid_request',
        error_description: 'client_id must not contain control characters',
      });
      expect(queries).toBe(0);
    }
  });

  it("a client's own concurrent requests from one address are not failures: sixteen at once all get tokens", async () => {
    const client = await runtimeClient();
    const auth = { authorization: basic(client.clientId, client.clientSecret) };
    const answers = await Promise.all(
      Array.from({ length: 16 }, () => tokenRequest({ grant_type: 'client_credentials' }, auth, '10.67.0.1')),
    );
    expect(answers.map((r) => r.statusCode)).toEqual(Array(16).fill(200));
  });

  it('made-up client ids from one address get thirty secret checks a minute, so real clients keep slots', async () => {
    const client = await runtimeClient();
    const { SecretChecker, MAX_CHECKS_IN_FLIGHT } = await import('../../apps/api/token-issuer/client-secrets.js');
    const { MAX_ADDRESS_FAILURES } = await import('../../apps/api/token-issuer/failure-limiter.js');
    const checks = jest.spyOn(api.app.get(SecretChecker), 'matchesAny');
    try {
      const real = (address: string) =>
        tokenRequest(
          { grant_type: 'client_credentials' },
          { authorization: basic(client.clientId, client.clientSecret) },
          address,
        );
      // All at once, as a flood arrives; real clients from another address in the middle of it, as many as
      // the slots the flood leaves free.
      const flood = Array.from({ length: 120 }, (_, i) =>
        tokenRequest(
          { grant_type: 'client_credentials' },
          { authorization: basic(unique(`madeup-${i}`), 'x') },
          '10.66.0.1',
        ),
      );
      const realCount = MAX_CHECKS_IN_FLIGHT - MAX_ADDRESS_FAILURES;
      const reals = Array.from({ length: realCount }, () => real('10.66.0.2'));
      const floodAnswers = await Promise.all(flood);
      const realAnswers = await Promise.all(reals);
      expect(realAnswers.map((r) => r.statusCode)).toEqual(Array(realCount).fill(200));
      const statuses = floodAnswers.map((r) => r.statusCode);
      expect(statuses.filter((code) => code === 401)).toHaveLength(30);
      // Refused while the first thirty were in flight, before any failed: busy (503), not locked (429).
      expect(statuses.filter((code) => code === 503)).toHaveLength(90);
      for (const busy of floodAnswers.filter((r) => r.statusCode === 503)) {
        expect(busy.json()).toMatchObject({ error: 'temporarily_unavailable' });
        expect(Number(busy.headers['retry-after'])).toBeGreaterThan(0);
      }
      // Thirty secret checks for the whole flood (a refusal costs none), one per real request.
      expect(checks).toHaveBeenCalledTimes(30 + realCount);
      // Thirty failures lock the flooding address for every client id alike, real ones included (DESIGN 10).
      const locked = await real('10.66.0.1');
      expect([locked.statusCode, locked.json<{ error: string }>().error]).toEqual([429, 'invalid_client']);
    } finally {
      checks.mockRestore();
    }
  });

  describe('no answer tells an existing client id from a made-up one', () => {
    const attempt = (id: string, secret: string, address: string) =>
      tokenRequest({ grant_type: 'client_credentials' }, { authorization: basic(id, secret) }, address);
    /** What a caller can see of a refusal, the Retry-After value aside (it depends on the clock). */
    const seen = (res: Awaited<ReturnType<typeof attempt>>) => ({
      status: res.statusCode,
      body: res.json<{ error: string; error_description: string }>().error,
      challenge: res.headers['www-authenticate'],
      retryAfter: res.headers['retry-after'] === undefined ? 'none' : 'set',
    });

    it('after 10 failures of a pair, that pair is 429 whether its id exists or not', async () => {
      const client = await runtimeClient();
      const series = async (id: string, address: string) => {
        const seenAnswers = [];
        for (let i = 0; i < 11; i++) seenAnswers.push(seen(await attempt(id, `wrong-${i}`, address)));
        return seenAnswers;
      };
      const real = await series(client.clientId, '10.67.0.1');
      expect(await series(unique('madeup'), '10.67.0.2')).toEqual(real);
      expect(real.map((a) => a.status)).toEqual([...Array(10).fill(401), 429]);
      // The right secret is refused too while the pair is locked, and never from another address.
      expect((await attempt(client.clientId, client.clientSecret, '10.67.0.1')).statusCode).toBe(429);
      expect((await attempt(client.clientId, client.clientSecret, '10.67.0.3')).statusCode).toBe(200);
    });

    it('after 30 failures of an address, with made-up ids, a real id is 429 there as a made-up one is', async () => {
      const client = await runtimeClient();
      const { SecretChecker } = await import('../../apps/api/token-issuer/client-secrets.js');
      const address = '10.68.0.1';
      const failures = [];
      // Ten is where the old per-address count of unknown ids locked them while real ids still got 401.
      for (let i = 0; i < 30; i++) failures.push((await attempt(unique(`madeup-${i}`), 'x', address)).statusCode);
      expect(failures).toEqual(Array(30).fill(401));
      const checks = jest.spyOn(api.app.get(SecretChecker), 'matchesAny');
      try {
        const madeUp = seen(await attempt(unique('madeup'), 'x', address));
        const realWrong = seen(await attempt(client.clientId, 'wrong', address));
        const realRight = seen(await attempt(client.clientId, client.clientSecret, address));
        expect(madeUp).toEqual({ status: 429, body: 'invalid_client', challenge: undefined, retryAfter: 'set' });
        expect(realWrong).toEqual(madeUp);
        expect(realRight).toEqual(madeUp);
        // Refusals cost no hash computation.
        expect(checks).not.toHaveBeenCalled();
      } finally {
        checks.mockRestore();
      }
      // Failures from one address never lock the client out elsewhere.
      expect((await attempt(client.clientId, client.clientSecret, '10.68.0.2')).statusCode).toBe(200);
    });

    it('the first failures from an address are 401 for real and made-up ids alike', async () => {
      const client = await runtimeClient();
      const address = '10.69.0.1';
      for (let i = 0; i < 10; i++) expect((await attempt(unique(`madeup-${i}`), 'x', address)).statusCode).toBe(401);
      // Under the old rule the eleventh made-up id was 429 here while the real one was 401.
      expect(seen(await attempt(unique('madeup'), 'x', address))).toEqual(
        seen(await attempt(client.clientId, 'wrong', address)),
      );
    });
  });

  it('a form body anywhere else is still 415', async () => {
    const res = await api.app.inject({
      method: 'POST',
      url: '/tags',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'tagName=x',
    });
    expect(res.statusCode).toBe(415);
  });

  // DESIGN 3 and 10: every error of the token endpoint is RFC 6749 5.2 JSON, body-format refusals included.
  it.each([
    ['a JSON body', 'application/json', '{"grant_type":"client_credentials"}', 400],
    ['malformed JSON', 'application/json', '{"grant_type":', 400],
    ['a text body', 'text/plain', 'grant_type=client_credentials', 400],
    ['a form in ISO-8859-1', 'application/x-www-form-urlencoded; charset=iso-8859-1', 'grant_type=x', 400],
    ['a form over 16 KiB', 'application/x-www-form-urlencoded', `grant_type=x&pad=${'a'.repeat(17_000)}`, 413],
  ])('%s is %i invalid_request as RFC 6749 JSON, not problem+json', async (_name, type, payload, status) => {
    const res = await api.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      headers: { 'content-type': type, authorization: basic('nobody', 'x') },
      payload,
    });
    expect([res.statusCode, res.headers['content-type'], res.headers['cache-control']]).toEqual([
      status,
      'application/json; charset=utf-8',
      'no-store',
    ]);
    expect(res.json()).toEqual({ error: 'invalid_request', error_description: expect.any(String) });
  });

  it('a malformed query string on the token endpoint is invalid_request too; other routes keep problem+json', async () => {
    const token = await api.app.inject({ method: 'POST', url: '/oauth2/token?x=%zz' });
    expect([token.statusCode, token.json()]).toEqual([
      400,
      { error: 'invalid_request', error_description: 'Malformed percent-encoding in the query string' },
    ]);
    const tags = await api.app.inject({
      method: 'GET',
      url: '/tags?x=%zz',
      headers: { authorization: `Bearer ${admin}` },
    });
    expect([tags.statusCode, tags.headers['content-type']]).toEqual([400, 'application/problem+json; charset=utf-8']);
  });

  it('never logs a secret (plain, in a Basic header, posted, or wrong), an issued token or the private key', async () => {
    const client = await runtimeClient();
    const header = basic(client.clientId, client.clientSecret);
    const res = await tokenRequest({ grant_type: 'client_credentials' }, { authorization: header });
    const token = res.json<{ access_token: string }>().access_token;
    const posted = await tokenRequest({
      grant_type: 'client_credentials',
      client_id: client.clientId,
      client_secret: client.clientSecret,
    });
    expect(posted.statusCode).toBe(200);
    const wrong = `${client.clientSecret.slice(0, -4)}AAAA`;
    expect(
      (await tokenRequest({ grant_type: 'client_credentials' }, { authorization: basic(client.clientId, wrong) }))
        .statusCode,
    ).toBe(401);
    const text = api.logs.raw.join('\n');
    expect(text).toContain('token issued');
    for (const secret of [client.clientSecret, header.slice('Basic '.length), wrong, token.split('.')[2] ?? '']) {
      expect(text).not.toContain(secret);
    }
    expect(text).not.toContain('PRIVATE KEY');
    // Any line of the PEM bodies (base64 of the private keys).
    const pemLines = readFileSync(keys.file, 'utf8')
      .split('\n')
      .filter((line) => line.length >= 40 && !line.startsWith('-----'));
    expect(pemLines.length).toBeGreaterThan(3);
    for (const line of pemLines) expect(text).not.toContain(line);
  });
});

describe('npm run client:create', () => {
  const cli = (args: string[]) =>
    run('scripts/client-create.js', args, {
      DATABASE_URL: process.env.DATABASE_URL ?? '',
      DATABASE_SESSION_URL: process.env.DATABASE_SESSION_URL ?? '',
      DATABASE_POOL_MODE: process.env.DATABASE_POOL_MODE ?? '',
      TOKEN_ISSUER_KEY_FILE: keys.file,
      JWT_ISSUER: ISSUER,
      CONTROLLER_HOST_ID: 'h-ctl',
    });

  it('makes the first operator client and prints its secret once; the secret gets a token', async () => {
    const id = unique('ops-cli');
    const created = cli(['--id', id, '--scope', 'portal.r portal.w portal.admin']);
    expect(await created.exit()).toBe(0);
    const secret = /client secret \(shown once\): (\S+)/.exec(created.output())?.[1] ?? '';
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const res = await tokenRequest({ grant_type: 'client_credentials' }, { authorization: basic(id, secret) });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ scope: 'portal.r portal.w portal.admin' });
    const again = cli(['--id', id, '--scope', 'portal.admin']);
    expect(await again.exit()).toBe(1);
    expect(again.output()).toContain('already exists');
  }, 60_000);

  it('refuses a runtime client without host and sid, and an unknown flag, with one line', async () => {
    const runtime = cli(['--id', unique('rt-cli'), '--scope', 'portal.r', '--sid', 'svc']);
    expect(await runtime.exit()).toBe(1);
    expect(runtime.output()).toContain('A runtime client needs host and sid');
    const bogus = cli(['--bogus']);
    expect(await bogus.exit()).toBe(2);
    expect(bogus.output()).toContain('usage: npm run client:create');
  }, 60_000);
});
