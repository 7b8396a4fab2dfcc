import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { call, startApi, type TestApi } from '../support/api.js';
import { callers } from '../support/tokens.js';

let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api.close());

const requestLines = (id: string) =>
  api.logs.lines.filter((l) => (l.req as { id?: string } | undefined)?.id === id && l.msg === 'request completed');

it('logs one JSON line per request with the incoming X-Request-Id, echoed in the response', async () => {
  const res = await call(api, 'GET', '/tags?limit=1', {
    token: await callers.admin(),
    headers: { 'x-request-id': 'trace-abc.123' },
  });
  expect(res.headers['x-request-id']).toBe('trace-abc.123');
  const lines = requestLines('trace-abc.123');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ level: 30, req: { method: 'GET', url: '/tags' }, res: { statusCode: 200 } });
});

it('makes a request id when none (or a malformed one) is sent', async () => {
  const res = await call(api, 'GET', '/health/live', { headers: { 'x-request-id': 'bad id with spaces' } });
  const id = res.headers['x-request-id'] as string;
  expect(id).toMatch(/^[0-9a-f-]{36}$/);
  expect(requestLines(id)).toHaveLength(1);
});

it('never logs the Authorization header, nor query strings', async () => {
  const token = await callers.admin();
  await call(api, 'GET', '/tags?q=secret-query', { token });
  const text = api.logs.raw.join('\n');
  expect(text).not.toContain(token.split('.')[2]);
  expect(text).not.toContain('secret-query');
  expect(text).not.toMatch(/authorization/i);
});

it('logs the socket address, not X-Forwarded-For, when TRUST_PROXY is off', async () => {
  const res = await call(api, 'GET', '/health/live', { headers: { 'x-forwarded-for': '203.0.113.7' } });
  const [line] = requestLines(res.headers['x-request-id'] as string);
  expect((line?.req as { remoteAddress?: string }).remoteAddress).toBe('127.0.0.1');
});
