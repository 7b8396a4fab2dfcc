import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, sqlDuring, startApi, type TestApi } from '../support/api.js';
import { BAD_TOKEN_CLAIMS, BAD_TOKENS } from '../support/bad-tokens.js';
import { AUDIENCE, KEYS, token } from '../support/tokens.js';

let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

const claims = BAD_TOKEN_CLAIMS;

describe('a bad token is 401 invalid_token, and no SQL runs', () => {
  it.each(BAD_TOKENS)('%s', async (_, make) => {
    const bad = await make();
    const { result, queries } = await sqlDuring(() => call(api, 'GET', '/tags', { token: bad }));
    expect(result.statusCode).toBe(401);
    expect(result.headers['www-authenticate']).toBe('Bearer realm="bindery", error="invalid_token"');
    expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(result.json()).toMatchObject({ status: 401, title: 'Unauthorized' });
    expect(result.body).not.toContain(bad);
    expect(queries).toBe(0);
  });
});

describe('a malformed Bearer credential is 401 invalid_token (RFC 6750 3.1), and no SQL runs', () => {
  it.each([
    ['two words', 'Bearer a b'],
    ['a token and a trailing word', 'Bearer abc.def.ghi extra'],
    ['a character outside token68', 'Bearer abc{def}'],
    ['a comma list', 'Bearer a,b'],
    ['Bearer without a token', 'Bearer '],
    ['Bearer alone', 'Bearer'],
  ])('%s', async (_, authorization) => {
    const { result, queries } = await sqlDuring(() =>
      api.app.inject({ method: 'GET', url: '/tags', headers: { authorization } }),
    );
    expect(result.statusCode).toBe(401);
    expect(result.headers['www-authenticate']).toBe('Bearer realm="bindery", error="invalid_token"');
    expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(queries).toBe(0);
  });
});

describe('a missing token is 401 without error, and no SQL runs', () => {
  it.each([
    ['no Authorization header', {}],
    ['token only in the query string', { query: true }],
    ['another scheme', { authorization: 'Basic YWxpY2U6cHc=' }],
    ['an empty header', { authorization: '' }],
  ])('%s', async (_, how) => {
    const good = await token(claims);
    const url = 'query' in how ? `/tags?access_token=${good}` : '/tags';
    const headers = 'authorization' in how ? { authorization: how.authorization } : {};
    const { result, queries } = await sqlDuring(() => api.app.inject({ method: 'GET', url, headers }));
    expect(result.statusCode).toBe(401);
    expect(result.headers['www-authenticate']).toBe('Bearer realm="bindery"');
    expect(queries).toBe(0);
  });
});

describe('good tokens', () => {
  it.each([
    ['ES256', KEYS.es256],
    ['RS256', KEYS.rs256],
    ['PS256', KEYS.ps256],
  ])('%s is accepted', async (_, key) => {
    const res = await call(api, 'GET', '/tags?limit=1', { token: await token(claims, { key }) });
    expect(res.statusCode).toBe(200);
  });

  it('accepts aud as an array containing the audience, scope as scp array, and small clock skew', async () => {
    const res = await call(api, 'GET', '/tags?limit=1', {
      token: await token(
        { sub: 'a', scp: ['portal.r'] },
        { audience: ['other', AUDIENCE], notBefore: 10, expiresIn: -5 },
      ),
    });
    expect(res.statusCode).toBe(200);
  });

  it('a PS256 token is refused when JWT_ALGORITHMS leaves PS256 out', async () => {
    const strict = await startApi({ JWT_ALGORITHMS: 'ES256' });
    try {
      const res = await call(strict, 'GET', '/tags?limit=1', { token: await token(claims, { key: KEYS.ps256 }) });
      expect(res.statusCode).toBe(401);
      const ok = await call(strict, 'GET', '/tags?limit=1', { token: await token(claims) });
      expect(ok.statusCode).toBe(200);
    } finally {
      await strict.close();
    }
  });

  it('never writes a token into a log line', async () => {
    const secret = await token(claims);
    await call(api, 'GET', '/tags?limit=1', { token: secret });
    await call(api, 'GET', '/tags?limit=1', { token: `${secret}x` });
    await api.app.inject({ method: 'GET', url: `/tags?access_token=${secret}` });
    const signature = secret.split('.')[2];
    expect(api.logs.raw.length).toBeGreaterThan(0);
    for (const line of api.logs.raw) expect(line).not.toContain(signature);
  });
});
