import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { JWTPayload } from 'jose';
import { startApi, unique, type TestApi } from '../support/api.js';
import { UNTRUSTED } from '../support/tokens.js';
import {
  bearer,
  ENDPOINTS,
  expectBindingRejection,
  expectNoSql,
  expectProblem,
  issuedTokens,
  putFiles,
  putProperties,
  send,
  SENTENCES,
  signed,
  type Endpoint,
  type Query,
} from './support.js';

/**
 * The verification table (DESIGN 6.2 and issue 4) over real HTTP with real signed tokens, for each of
 * configs, certs and files: every 401/403 is proven to run no SQL at all.
 */

const HOST = unique('vt-host');
const SID = unique('vt-svc');
const ENV = 'prod';
const PRODUCT = unique('vt-prod');
const VERSION = '1.0.0';

const BASE_CLAIMS: JWTPayload = { sub: 'runtime-client', scope: 'portal.r', host: HOST, sid: SID, env: ENV };

/** `over` replaces claims (undefined removes one). */
function claims(over: Record<string, unknown> = {}): JWTPayload {
  const result: Record<string, unknown> = { ...BASE_CLAIMS };
  for (const [name, value] of Object.entries(over)) {
    if (value === undefined) delete result[name];
    else result[name] = value;
  }
  return result;
}

const FULL: Query = { host: HOST, serviceId: SID, envTag: ENV };
const NO_ENV: Query = { host: HOST, serviceId: SID };
const PRODUCT_LEVEL: Query = { host: HOST, productId: PRODUCT, productVersion: VERSION };

type Variant = 'full' | 'noEnv' | 'product';

type Expectation =
  | { readonly ok: Variant }
  | { readonly binding: keyof typeof SENTENCES }
  | { readonly unauthorized: 'missing' | 'invalid' }
  | { readonly scope: true }
  | { readonly badRequest: string };

interface Case {
  readonly name: string;
  readonly claims?: JWTPayload;
  /** Instead of a token with `claims`. */
  readonly authorization?: () => Promise<string | undefined>;
  readonly query?: Query;
  readonly headers?: Record<string, string>;
  readonly expect: Expectation;
}

const LONG = 'x'.repeat(129);

const CASES: readonly Case[] = [
  // Token verification and scope come first.
  {
    name: 'no Authorization header',
    authorization: () => Promise.resolve(undefined),
    expect: { unauthorized: 'missing' },
  },
  {
    name: 'a token that is not a JWT',
    authorization: () => Promise.resolve('Bearer not-a-jwt'),
    expect: { unauthorized: 'invalid' },
  },
  {
    name: 'a token signed by an untrusted key',
    authorization: async () => bearer(await signed(claims(), { key: UNTRUSTED })),
    expect: { unauthorized: 'invalid' },
  },
  {
    name: 'an expired token',
    authorization: async () => bearer(await signed(claims(), { expiresIn: -600 })),
    expect: { unauthorized: 'invalid' },
  },
  {
    name: 'a token of another audience',
    authorization: async () => bearer(await signed(claims(), { audience: 'someone-else' })),
    expect: { unauthorized: 'invalid' },
  },
  {
    name: 'the token in a query parameter instead of the header',
    authorization: () => Promise.resolve(undefined),
    query: { ...FULL, access_token: 'ignored' },
    expect: { unauthorized: 'missing' },
  },
  { name: 'a token without portal.r', claims: claims({ scope: 'portal.x' }), expect: { scope: true } },
  { name: 'a token without any scope', claims: claims({ scope: undefined }), expect: { scope: true } },
  {
    name: 'scope failure is answered before a binding mismatch',
    claims: claims({ scope: 'portal.x', host: 'other-host' }),
    expect: { scope: true },
  },
  // DESIGN 16's table: config:read comes with portal.r alone, not with portal.w or portal.admin.
  { name: 'portal.w without portal.r', claims: claims({ scope: 'portal.w' }), expect: { scope: true } },
  { name: 'portal.admin without portal.r', claims: claims({ scope: 'portal.admin' }), expect: { scope: true } },
  { name: 'portal.r among others', claims: claims({ scope: 'portal.w portal.r' }), expect: { ok: 'full' } },
  { name: 'scp array scope', claims: claims({ scope: undefined, scp: ['portal.r'] }), expect: { ok: 'full' } },

  // Rule 1: host.
  { name: 'token and request bound to the same host, service and env', claims: claims(), expect: { ok: 'full' } },
  { name: 'token host missing', claims: claims({ host: undefined }), expect: { binding: 'host' } },
  { name: 'token host empty', claims: claims({ host: '' }), expect: { binding: 'host' } },
  { name: 'token host whitespace only', claims: claims({ host: '   ' }), expect: { binding: 'host' } },
  { name: 'token host a number', claims: claims({ host: 42 }), expect: { binding: 'host' } },
  { name: 'token host an array holding the host', claims: claims({ host: [HOST] }), expect: { binding: 'host' } },
  { name: 'token host an object', claims: claims({ host: { id: HOST } }), expect: { binding: 'host' } },
  { name: 'token host another host', claims: claims({ host: unique('vt-other') }), expect: { binding: 'host' } },
  { name: 'token host in another case', claims: claims({ host: HOST.toUpperCase() }), expect: { binding: 'host' } },
  { name: 'token host padded with whitespace', claims: claims({ host: `  ${HOST}\t` }), expect: { ok: 'full' } },
  { name: 'requested host padded with whitespace', query: { ...FULL, host: ` ${HOST}  ` }, expect: { ok: 'full' } },
  { name: 'requested host missing', query: { serviceId: SID, envTag: ENV }, expect: { binding: 'host' } },
  { name: 'requested host empty', query: { ...FULL, host: '' }, expect: { binding: 'host' } },
  { name: 'requested host whitespace only', query: { ...FULL, host: '  ' }, expect: { binding: 'host' } },
  { name: 'requested host in another case', query: { ...FULL, host: HOST.toUpperCase() }, expect: { binding: 'host' } },
  {
    name: 'sub equal to the host does not stand in for host',
    claims: claims({ host: undefined, sub: HOST }),
    expect: { binding: 'host' },
  },
  {
    name: 'an admin token without a host claim is still bound',
    claims: { sub: 'root', scope: 'portal.r portal.admin' },
    expect: { binding: 'host' },
  },
  {
    name: 'product-level request with another token host',
    claims: claims({ host: 'other-host' }),
    query: PRODUCT_LEVEL,
    expect: { binding: 'host' },
  },

  // Rule 2: sid, when serviceId is given.
  { name: 'token sid missing', claims: claims({ sid: undefined }), expect: { binding: 'sid' } },
  { name: 'token sid empty', claims: claims({ sid: '' }), expect: { binding: 'sid' } },
  { name: 'token sid whitespace only', claims: claims({ sid: ' \t ' }), expect: { binding: 'sid' } },
  { name: 'token sid a number', claims: claims({ sid: 7 }), expect: { binding: 'sid' } },
  { name: 'token sid an array holding the service', claims: claims({ sid: [SID] }), expect: { binding: 'sid' } },
  { name: 'token sid another service', claims: claims({ sid: unique('vt-svc') }), expect: { binding: 'sid' } },
  { name: 'token sid in another case', claims: claims({ sid: SID.toUpperCase() }), expect: { binding: 'sid' } },
  { name: 'token sid padded with whitespace', claims: claims({ sid: ` ${SID} ` }), expect: { ok: 'full' } },
  {
    name: 'requested serviceId padded with whitespace',
    query: { ...FULL, serviceId: `\t${SID} ` },
    expect: { ok: 'full' },
  },
  {
    name: 'requested serviceId in another case',
    query: { ...FULL, serviceId: SID.toUpperCase() },
    expect: { binding: 'sid' },
  },
  {
    name: 'sub equal to the serviceId does not stand in for sid',
    claims: claims({ sid: undefined, sub: SID }),
    expect: { binding: 'sid' },
  },
  {
    name: 'an X-Service-Id header does not stand in for sid',
    claims: claims({ sid: undefined }),
    headers: { 'x-service-id': SID, 'x-host': HOST, 'x-env-tag': ENV },
    expect: { binding: 'sid' },
  },

  // Rule 3: env, when envTag is given.
  { name: 'token env missing', claims: claims({ env: undefined }), expect: { binding: 'env' } },
  { name: 'token env empty', claims: claims({ env: '' }), expect: { binding: 'env' } },
  { name: 'token env whitespace only', claims: claims({ env: '  ' }), expect: { binding: 'env' } },
  { name: 'token env a number', claims: claims({ env: 5 }), expect: { binding: 'env' } },
  { name: 'token env a boolean', claims: claims({ env: true }), expect: { binding: 'env' } },
  { name: 'token env another environment', claims: claims({ env: 'dev' }), expect: { binding: 'env' } },
  { name: 'token env in another case', claims: claims({ env: 'Prod' }), expect: { binding: 'env' } },
  { name: 'token env padded with whitespace', claims: claims({ env: `${ENV}  ` }), expect: { ok: 'full' } },
  { name: 'requested envTag padded with whitespace', query: { ...FULL, envTag: `  ${ENV}` }, expect: { ok: 'full' } },
  { name: 'requested envTag in another case', query: { ...FULL, envTag: 'PROD' }, expect: { binding: 'env' } },
  { name: 'envTag omitted, token with env', query: NO_ENV, expect: { ok: 'noEnv' } },
  {
    name: 'envTag omitted, token without env',
    claims: claims({ env: undefined }),
    query: NO_ENV,
    expect: { ok: 'noEnv' },
  },
  {
    name: 'envTag omitted, token env of another environment',
    claims: claims({ env: 'dev' }),
    query: NO_ENV,
    expect: { ok: 'noEnv' },
  },
  {
    name: 'envTag empty counts as omitted',
    claims: claims({ env: undefined }),
    query: { ...NO_ENV, envTag: '' },
    expect: { ok: 'noEnv' },
  },
  { name: 'envTag blank counts as omitted', query: { ...NO_ENV, envTag: '   ' }, expect: { ok: 'noEnv' } },

  // Product-level requests (no serviceId) skip rule 2.
  {
    name: 'product-level, token without sid',
    claims: claims({ sid: undefined, env: undefined }),
    query: PRODUCT_LEVEL,
    expect: { ok: 'product' },
  },
  { name: 'product-level, token with a sid', query: PRODUCT_LEVEL, expect: { ok: 'product' } },
  {
    name: 'product-level, token bound to another service',
    claims: claims({ sid: unique('vt-svc') }),
    query: PRODUCT_LEVEL,
    expect: { ok: 'product' },
  },
  {
    name: 'product-level with an empty serviceId',
    claims: claims({ sid: undefined }),
    query: { ...PRODUCT_LEVEL, serviceId: '' },
    expect: { ok: 'product' },
  },
  {
    name: 'product-level with envTag still checks env',
    claims: claims({ sid: undefined, env: 'dev' }),
    query: { ...PRODUCT_LEVEL, envTag: ENV },
    expect: { binding: 'env' },
  },
  {
    name: 'product-level without productVersion is a bad request',
    query: { host: HOST, productId: PRODUCT },
    expect: { badRequest: 'productVersion' },
  },
  {
    name: 'neither serviceId nor product is a bad request',
    query: { host: HOST },
    expect: { badRequest: 'serviceId' },
  },

  // Rule order.
  {
    name: 'host, sid and env all wrong: the host sentence',
    claims: claims({ host: 'a', sid: 'b', env: 'c' }),
    expect: { binding: 'host' },
  },
  { name: 'sid and env wrong: the sid sentence', claims: claims({ sid: 'b', env: 'c' }), expect: { binding: 'sid' } },
  {
    name: 'host and env wrong: the host sentence',
    claims: claims({ host: 'a', env: 'c' }),
    expect: { binding: 'host' },
  },

  // A repeated binding parameter is 400 before the binding is decided (DESIGN 3); others after it.
  { name: 'host repeated', query: { ...FULL, host: [HOST, HOST] }, expect: { badRequest: 'host' } },
  { name: 'serviceId repeated', query: { ...FULL, serviceId: [SID, SID] }, expect: { badRequest: 'serviceId' } },
  { name: 'envTag repeated', query: { ...FULL, envTag: [ENV, ENV] }, expect: { badRequest: 'envTag' } },
  {
    name: 'serviceId repeated with another service',
    query: { ...FULL, serviceId: [SID, unique('vt-svc')] },
    expect: { badRequest: 'serviceId' },
  },
  {
    name: 'host repeated with another host',
    query: { ...FULL, host: ['other', HOST] },
    expect: { badRequest: 'host' },
  },
  {
    name: 'envTag repeated, the token bound elsewhere: still 400, the repetition is decided first',
    claims: claims({ sid: 'another-service' }),
    query: { ...FULL, envTag: [ENV, 'other'] },
    expect: { badRequest: 'envTag' },
  },
  {
    name: 'productId repeated',
    query: { ...PRODUCT_LEVEL, productId: [PRODUCT, PRODUCT] },
    expect: { badRequest: 'productId' },
  },
  // An undeclared parameter's name is never echoed (DESIGN 3): it is reported as (query).
  { name: 'an unknown parameter', query: { ...FULL, verbose: 'true' }, expect: { badRequest: '(query)' } },
  {
    name: 'an over-long serviceId bound in the token',
    claims: claims({ sid: LONG }),
    query: { ...FULL, serviceId: LONG },
    expect: { badRequest: 'serviceId' },
  },
  {
    name: 'a control character in productVersion',
    query: { ...PRODUCT_LEVEL, productVersion: '1.0\u0001' },
    expect: { badRequest: 'productVersion' },
  },
];

const LABELS: Record<Endpoint, 'cert' | 'file' | null> = { configs: null, certs: 'cert', files: 'file' };

/** What each variant must answer, per endpoint: layers merged, the higher layer winning. */
function expected(endpoint: Endpoint, variant: Variant): Record<string, unknown> {
  if (endpoint === 'configs') {
    return {
      full: { 'app.fromService': true, 'app.fromServiceEnv': ['x', 2], 'app.shared': 'service-env' },
      noEnv: { 'app.fromService': true, 'app.shared': 'service' },
      product: { 'app.fromProduct': 1, 'app.shared': 'product' },
    }[variant];
  }
  const b = (text: string): string => Buffer.from(`${endpoint}:${text}`).toString('base64');
  return {
    full: { 'env.txt': b('e'), 'service.txt': b('s'), 'shared.txt': b('service-env') },
    noEnv: { 'service.txt': b('s'), 'shared.txt': b('service') },
    product: { 'product.txt': b('p'), 'shared.txt': b('product') },
  }[variant];
}

describe('config server verification table', () => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startApi();
    await putProperties(api, PRODUCT_LEVEL, { 'app.shared': 'product', 'app.fromProduct': 1 });
    await putProperties(api, NO_ENV, { 'app.shared': 'service', 'app.fromService': true });
    await putProperties(api, FULL, { 'app.shared': 'service-env', 'app.fromServiceEnv': ['x', 2] });
    for (const endpoint of ['certs', 'files'] as const) {
      const kind = LABELS[endpoint]!;
      const f = (text: string): string => `${endpoint}:${text}`;
      await putFiles(api, PRODUCT_LEVEL, kind, { 'shared.txt': f('product'), 'product.txt': f('p') });
      await putFiles(api, NO_ENV, kind, { 'shared.txt': f('service'), 'service.txt': f('s') });
      await putFiles(api, FULL, kind, { 'shared.txt': f('service-env'), 'env.txt': f('e') });
    }
  });
  afterAll(() => api.close());

  describe.each(ENDPOINTS)('GET /config-server/%s', (endpoint) => {
    it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_, testCase) => {
      const authorization = testCase.authorization
        ? await testCase.authorization()
        : bearer(await signed(testCase.claims ?? claims()));
      const sent = await send(api, 'GET', `/config-server/${endpoint}`, {
        query: testCase.query ?? FULL,
        ...(authorization === undefined ? {} : { authorization }),
        ...(testCase.headers === undefined ? {} : { headers: testCase.headers }),
      });
      const want = testCase.expect;
      if ('ok' in want) {
        expect(sent.res.statusCode).toBe(200);
        expect(sent.res.headers['content-type']).toMatch(/^application\/json/);
        expect(sent.res.json()).toEqual(expected(endpoint, want.ok));
        expect(sent.queries).toBeGreaterThan(0);
      } else if ('binding' in want) {
        expectBindingRejection(sent, SENTENCES[want.binding]);
      } else if ('unauthorized' in want) {
        expectProblem(sent, 401);
        expect(sent.res.headers['www-authenticate']).toBe(
          want.unauthorized === 'missing' ? 'Bearer realm="bindery"' : 'Bearer realm="bindery", error="invalid_token"',
        );
        expectNoSql(sent);
      } else if ('scope' in want) {
        expectProblem(sent, 403);
        expect(sent.res.headers['www-authenticate']).toContain('error="insufficient_scope"');
        expectNoSql(sent);
      } else {
        const problem = expectProblem(sent, 400);
        const fields = (problem.errors as { field: string }[] | undefined)?.map((e) => e.field) ?? [];
        expect(fields.some((f) => f === want.badRequest) || String(problem.detail).includes(want.badRequest)).toBe(
          true,
        );
        expect(sent.queries).toBe(0);
      }
    });
  });

  describe('rejection log line', () => {
    it('logs exactly one warning per rejection, with the contract fields and no token or other claims', async () => {
      const requestId = unique('vt-req');
      const jwt = await signed(claims({ sid: 'sid-in-token', email: 'secret@example.com', jti: 'jti-secret' }));
      const sent = await send(api, 'GET', '/config-server/certs', {
        query: { host: ` ${HOST}`, serviceId: SID, envTag: ENV },
        authorization: bearer(jwt),
        headers: { 'x-request-id': requestId },
      });
      expectBindingRejection(sent, SENTENCES.sid);
      const mine = api.logs.lines.filter((l) => (l.req as { id?: string } | undefined)?.id === requestId);
      const warnings = mine.filter((l) => l.level === 40);
      expect(warnings).toHaveLength(1);
      const line = warnings[0];
      expect(line).toMatchObject({
        endpoint: '/config-server/certs',
        requestedServiceId: SID,
        tokenSid: 'sid-in-token',
        requestedHost: ` ${HOST}`,
        tokenHost: HOST,
        envTag: ENV,
        tokenEnv: ENV,
        reason: 'sid',
      });
      expect(String(line.msg)).toContain(SENTENCES.sid);
      const text = JSON.stringify(mine);
      for (const secret of [jwt, 'secret@example.com', 'jti-secret', 'runtime-client', 'portal.r']) {
        expect(text).not.toContain(secret);
      }
    });

    it('logs a line for every rejection reason, and none for an allowed request', async () => {
      const reasons: [JWTPayload, string][] = [
        [claims({ host: 'h-x' }), 'host'],
        [claims({ sid: 's-x' }), 'sid'],
        [claims({ env: 'e-x' }), 'env'],
      ];
      for (const [tokenClaims, reason] of reasons) {
        const requestId = unique('vt-req');
        await send(api, 'GET', '/config-server/files', {
          query: FULL,
          authorization: bearer(await signed(tokenClaims)),
          headers: { 'x-request-id': requestId },
        });
        const warnings = api.logs.lines.filter(
          (l) => (l.req as { id?: string } | undefined)?.id === requestId && l.level === 40,
        );
        expect(warnings.map((w) => w.reason)).toEqual([reason]);
        expect(Object.keys(warnings[0])).toEqual(
          expect.arrayContaining([
            'endpoint',
            'requestedServiceId',
            'tokenSid',
            'requestedHost',
            'tokenHost',
            'envTag',
            'tokenEnv',
          ]),
        );
      }
      const requestId = unique('vt-req');
      await send(api, 'GET', '/config-server/files', {
        query: FULL,
        authorization: bearer(await signed(claims())),
        headers: { 'x-request-id': requestId },
      });
      const allowed = api.logs.lines.filter((l) => (l.req as { id?: string } | undefined)?.id === requestId);
      expect(allowed.filter((l) => l.level === 40)).toEqual([]);
    });

    it('counts rejections by reason and endpoint in /metrics', async () => {
      const res = await api.app.inject({ method: 'GET', url: '/metrics' });
      expect(res.statusCode).toBe(200);
      for (const endpoint of ENDPOINTS) {
        for (const reason of ['host', 'sid', 'env']) {
          const line = new RegExp(
            `^bindery_binding_rejections_total\\{reason="${reason}",endpoint="/config-server/${endpoint}"\\} [1-9]`,
            'm',
          );
          expect(res.body).toMatch(line);
        }
      }
    });

    it('no log line of this file contains any token it sent', () => {
      expect(issuedTokens.length).toBeGreaterThan(100);
      expect(api.logs.raw.length).toBeGreaterThan(0);
      const all = api.logs.raw.join('\n');
      for (const jwt of issuedTokens) {
        expect(all).not.toContain(jwt);
        // The signature alone is as secret as the token.
        expect(all).not.toContain(jwt.split('.')[2]);
      }
      expect(all).not.toContain('not-a-jwt');
    });
  });
});
