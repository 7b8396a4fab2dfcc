import { operatorPrincipal } from '#token-binding';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { ClientsService } from '../../apps/api/token-issuer/clients.service.js';
import { HASHES_PER_CHECK, SecretChecker } from '../../apps/api/token-issuer/client-secrets.js';
import { FailureLimiter } from '../../apps/api/token-issuer/failure-limiter.js';
import { sqlDuring, startApi, unique, type TestApi } from '../support/api.js';
import { writeIssuerKeyFile } from '../support/tokens.js';

/** POST /oauth2/token's client authentication (DESIGN 10): what its cost, its memory and its log lines tell. */
let api: TestApi;

beforeAll(async () => {
  api = await startApi({ JWT_JWKS_FILE: '', TOKEN_ISSUER_KEY_FILE: writeIssuerKeyFile().file });
});
afterAll(() => api.close());

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

const viaBasic = (id: string, secret: string, address: string) =>
  api.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(id, secret) },
    payload: 'grant_type=client_credentials',
    remoteAddress: address,
  });

const viaForm = (id: string, secret: string, address: string) =>
  api.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ grant_type: 'client_credentials', client_id: id, client_secret: secret }).toString(),
    remoteAddress: address,
  });

/** Everything a caller sees of a refusal. */
const seen = (res: Awaited<ReturnType<typeof viaBasic>>) => ({
  status: res.statusCode,
  type: res.headers['content-type'],
  challenge: res.headers['www-authenticate'],
  retryAfter: res.headers['retry-after'],
  body: res.body,
});

const runtimeClient = () =>
  api.app
    .get(ClientsService)
    .create(operatorPrincipal('test'), { host: 'h-auth', sid: unique('svc'), scopes: ['portal.r'], envs: [] });

describe('every client authentication computes the same number of hashes', () => {
  it('for an unknown id, a client without grace and a client in rotation grace, right secret or wrong', async () => {
    const client = await runtimeClient();
    const checks = jest.spyOn(api.app.get(SecretChecker), 'check');
    const counted = async (id: string, secret: string) => {
      checks.mockClear();
      const status = (await viaBasic(id, secret, '10.71.0.1')).statusCode;
      return [status, checks.mock.calls.length];
    };
    try {
      expect(await counted(unique('made-up'), 'wrong')).toEqual([401, HASHES_PER_CHECK]);
      expect(await counted('not a client id', 'wrong')).toEqual([401, HASHES_PER_CHECK]);
      expect(await counted(client.clientId, 'wrong')).toEqual([401, HASHES_PER_CHECK]);
      expect(await counted(client.clientId, client.clientSecret)).toEqual([200, HASHES_PER_CHECK]);
      const rotated = await api.app.get(ClientsService).rotate(operatorPrincipal('test'), client.clientId, 60);
      expect(await counted(client.clientId, 'wrong')).toEqual([401, HASHES_PER_CHECK]);
      expect(await counted(client.clientId, client.clientSecret)).toEqual([200, HASHES_PER_CHECK]);
      expect(await counted(client.clientId, rotated.clientSecret)).toEqual([200, HASHES_PER_CHECK]);
    } finally {
      checks.mockRestore();
    }
  });
});

describe('a client_id that cannot be a client id', () => {
  const invalid = ['x'.repeat(101), 'has space', 'a@b', 'é'];

  it('is answered exactly as an unknown client is, in both methods, without a lookup', async () => {
    const unknown = seen(await viaBasic(unique('made-up'), 'x', '10.72.0.1'));
    expect(unknown.status).toBe(401);
    for (const id of invalid) {
      for (const send of [viaBasic, viaForm]) {
        const { result, queries } = await sqlDuring(() => send(id, 'x', '10.72.0.2'));
        expect(seen(result)).toEqual(unknown);
        expect(queries).toBe(0);
      }
    }
  });

  it('is counted under one key per address, so a spray of 15 KB ids keeps no id text in memory', async () => {
    const limiter = api.app.get(FailureLimiter);
    const before = limiter.tracked().pairs;
    // Just under the 16 KB a form body may have.
    const sprayed = (i: number) => `${i}-${'a'.repeat(15 * 1024)}`;
    const answers = [];
    for (let i = 0; i < 10; i++) answers.push((await viaForm(sprayed(i), 'x', '10.73.0.1')).statusCode);
    expect(answers).toEqual(Array(10).fill(401));
    expect(limiter.tracked().pairs).toBe(before + 1);
    // One pair for all of them: the eleventh is locked as a made-up id tried eleven times is.
    const locked = await viaForm(sprayed(10), 'x', '10.73.0.1');
    expect(locked.statusCode).toBe(429);
    expect(locked.json()).toMatchObject({ error: 'invalid_client' });
    // A valid-looking id from that address still gets its check (the address has 10 of its 30).
    expect((await viaForm(unique('made-up'), 'x', '10.73.0.1')).statusCode).toBe(401);
  });
});

describe('failed authentications log no caller text that could be a secret', () => {
  it('a runtime that swaps its id and secret gets 401, and its secret appears in no log line', async () => {
    const client = await runtimeClient();
    const from = api.logs.lines.length;
    for (const send of [viaBasic, viaForm]) {
      expect((await send(client.clientSecret, client.clientId, '10.74.0.1')).statusCode).toBe(401);
    }
    const lines = api.logs.lines.slice(from);
    const failures = lines.filter((line) => line.msg === 'client authentication failed');
    expect(failures).toHaveLength(2);
    for (const line of failures) expect(line.clientId).toBe('(unknown)');
    expect(api.logs.raw.slice(from).join('\n')).not.toContain(client.clientSecret);
  });

  it("a stored client's failure still names it", async () => {
    const client = await runtimeClient();
    const from = api.logs.lines.length;
    expect((await viaBasic(client.clientId, 'wrong', '10.74.0.2')).statusCode).toBe(401);
    const failure = api.logs.lines.slice(from).find((line) => line.msg === 'client authentication failed');
    expect(failure).toMatchObject({ clientId: client.clientId, address: '10.74.0.2' });
  });
});
