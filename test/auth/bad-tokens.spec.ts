import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CompactSign } from 'jose';
import { call, sqlDuring, startApi, type TestApi } from '../support/api.js';
import { AUDIENCE, ISSUER, KEYS, UNTRUSTED, rawToken, token } from '../support/tokens.js';

let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

const claims = { sub: 'alice', scope: 'portal.r' };
const now = () => Math.floor(Date.now() / 1000);

/** The classic key-confusion forgery: HS256 keyed with the issuer's public key text. */
function hs256WithPublicKey(): string {
  const header = Buffer.from(JSON.stringify({ alg: 'HS256', kid: KEYS.rs256.kid })).toString('base64url');
  const payload = Buffer.from(JSON.stringify({ ...claims, iss: ISSUER, aud: AUDIENCE, exp: now() + 600 })).toString(
    'base64url',
  );
  const secret = KEYS.rs256.publicKey.export({ type: 'spki', format: 'pem' });
  const signature = createHmac('sha256', secret).update(`${header}.${payload}`).digest('base64url');
  return `${header}.${payload}.${signature}`;
}

/** A correctly signed JWS whose payload is JSON but not an object. */
function signedNonObject(payload: string): Promise<string> {
  return new CompactSign(new TextEncoder().encode(payload))
    .setProtectedHeader({ alg: 'ES256', kid: KEYS.es256.kid })
    .sign(KEYS.es256.privateKey);
}

const BAD_TOKENS: [string, () => Promise<string> | string][] = [
  ['alg none', () => rawToken({ alg: 'none' }, { ...claims, iss: ISSUER, aud: AUDIENCE, exp: now() + 600 }, '')],
  ['HS256 signed with the public key', hs256WithPublicKey],
  ['unknown kid', () => token(claims, { kid: 'nobody' })],
  ['signed by an untrusted key under a trusted kid', () => token(claims, { key: UNTRUSTED })],
  ['expired', () => token(claims, { expiresIn: -120 })],
  ['no exp', () => token(claims, { expiresIn: null })],
  ['nbf in the future', () => token(claims, { notBefore: 600 })],
  ['wrong iss', () => token(claims, { issuer: 'https://evil.test' })],
  ['no iss', () => token(claims, { issuer: null })],
  ['wrong aud', () => token(claims, { audience: 'someone-else' })],
  ['no aud', () => token(claims, { audience: null })],
  ['one segment', () => 'abc'],
  ['two segments', () => 'abc.def'],
  ['four segments', async () => `${await token(claims)}.x`],
  ['header not JSON', () => `bm90IGpzb24.${Buffer.from('{}').toString('base64url')}.c2ln`],
  ['payload a JSON string', () => signedNonObject('"just a string"')],
  ['payload a JSON array', () => signedNonObject('[1,2]')],
  [
    'tampered payload',
    async () => {
      const [h, , s] = (await token(claims)).split('.');
      const forged = Buffer.from(
        JSON.stringify({ ...claims, scope: 'portal.admin', iss: ISSUER, aud: AUDIENCE, exp: now() + 600 }),
      ).toString('base64url');
      return `${h}.${forged}.${s}`;
    },
  ],
  [
    'an algorithm outside the allowlist (ES256 key, header RS512)',
    () => rawToken({ alg: 'RS512', kid: KEYS.rs256.kid }, { ...claims, iss: ISSUER, aud: AUDIENCE, exp: now() + 600 }),
  ],
];

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

describe('a missing token is 401 without error, and no SQL runs', () => {
  it.each([
    ['no Authorization header', {}],
    ['token only in the query string', { query: true }],
    ['another scheme', { authorization: 'Basic YWxpY2U6cHc=' }],
    ['Bearer without a token', { authorization: 'Bearer ' }],
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
    ['EdDSA', KEYS.eddsa],
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
