import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sqlDuring, startApi, unique, type TestApi } from '../support/api.js';
import { callers, token } from '../support/tokens.js';

/**
 * DESIGN 3, order on HTTP: transport and body format (413, 415, malformed JSON, nesting), then 401, then
 * 403 for scope, then repeated binding parameters (400) and the binding (403), then validation (400),
 * then 404 and 412. Each request breaks the rule at one boundary and every rule after it: the answer
 * names the earlier one, and the refusals before the database never reach it.
 */
let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

const host = unique('order');
const nested = `{"tagName":${'['.repeat(40)}1${']'.repeat(40)}}`;

type Case = readonly [
  name: string,
  request: () => Promise<{
    method: 'GET' | 'POST' | 'PUT';
    url: string;
    headers: Record<string, string>;
    payload?: string;
  }>,
  status: number,
  reachesDatabase: boolean,
];

const config = (query: string) => `/config-server/configs?${query}`;
const runtime = (extra: Record<string, unknown> = {}) =>
  token({ sub: 'rt', scope: 'portal.r', host, sid: 'svc', ...extra });

const CASES: Case[] = [
  [
    '413 before 415 and 401: a declared body over 1 MiB, not JSON, no token',
    () =>
      Promise.resolve({
        method: 'POST',
        url: '/tags',
        headers: { 'content-type': 'text/plain', 'content-length': String(2 * 1024 * 1024) },
        payload: 'x'.repeat(2 * 1024 * 1024),
      }),
    413,
    false,
  ],
  [
    '415 before 401: a form body, no token',
    () =>
      Promise.resolve({
        method: 'POST',
        url: '/tags',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'tagName=x',
      }),
    415,
    false,
  ],
  [
    'malformed JSON (400) before 401',
    () =>
      Promise.resolve({
        method: 'POST',
        url: '/tags',
        headers: { 'content-type': 'application/json' },
        payload: '{"tagName":',
      }),
    400,
    false,
  ],
  [
    'nesting (400) before 401',
    () =>
      Promise.resolve({
        method: 'POST',
        url: '/tags',
        headers: { 'content-type': 'application/json' },
        payload: nested,
      }),
    400,
    false,
  ],
  [
    '401 before scope and validation: no token, an invalid body',
    () =>
      Promise.resolve({
        method: 'POST',
        url: '/tags',
        headers: { 'content-type': 'application/json' },
        payload: '{"bad":1}',
      }),
    401,
    false,
  ],
  [
    '403 scope before validation: a read-only token, an invalid body',
    async () => ({
      method: 'POST',
      url: '/tags',
      headers: { authorization: `Bearer ${await callers.reader(host)}`, 'content-type': 'application/json' },
      payload: '{"bad":1}',
    }),
    403,
    false,
  ],
  [
    '403 scope before repeated binding parameters: no scope at all, host twice',
    async () => ({
      method: 'GET',
      url: config(`host=${host}&host=x&serviceId=svc`),
      headers: { authorization: `Bearer ${await runtime({ scope: 'profile' })}` },
    }),
    403,
    false,
  ],
  [
    'repeated binding parameter (400) before the binding: host twice, sid mismatched',
    async () => ({
      method: 'GET',
      url: config(`host=${host}&host=x&serviceId=other`),
      headers: { authorization: `Bearer ${await runtime()}` },
    }),
    400,
    false,
  ],
  [
    'binding (403) before validation: sid mismatched, an unknown parameter',
    async () => ({
      method: 'GET',
      url: config(`host=${host}&serviceId=other&bogus=1`),
      headers: { authorization: `Bearer ${await runtime()}` },
    }),
    403,
    false,
  ],
  [
    'validation (400) before 404 and 412: an invalid body for a tag that does not exist, stale If-Match',
    async () => ({
      method: 'PUT',
      url: '/tags/AAAAAAAAAAAAAAAAAAAAAA',
      headers: {
        authorization: `Bearer ${await callers.admin()}`,
        'content-type': 'application/json',
        'if-match': 'W/"9"',
      },
      payload: '{"tagName":""}',
    }),
    400,
    false,
  ],
  [
    '404 before 412: a valid body for a tag that does not exist, stale If-Match',
    async () => ({
      method: 'PUT',
      url: '/tags/AAAAAAAAAAAAAAAAAAAAAA',
      headers: {
        authorization: `Bearer ${await callers.admin()}`,
        'content-type': 'application/json',
        'if-match': 'W/"9"',
      },
      payload: '{"tagName":"order-check"}',
    }),
    404,
    true,
  ],
];

describe('the order of checks on HTTP, one request per boundary', () => {
  it.each(CASES)('%s', async (_, build, status, reachesDatabase) => {
    const request = await build();
    const { result, queries } = await sqlDuring(() => api.app.inject(request));
    expect(result.statusCode).toBe(status);
    // Both ways: a request that reaches the database must be seen to, or a 0 would prove nothing.
    if (reachesDatabase) expect(queries).toBeGreaterThan(0);
    else expect(queries).toBe(0);
  });
});
