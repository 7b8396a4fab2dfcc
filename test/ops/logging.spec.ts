import { request } from 'node:http';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { call, listenApi, startApi, type TestApi } from '../support/api.js';
import { callers, writeIssuerKeyFile } from '../support/tokens.js';

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

it('gives a line logged after a request body was read the request id (the scope survives body parsing)', async () => {
  // A real socket: the body arrives in its own events, outside the context the request started in.
  const listening = await listenApi({ TOKEN_ISSUER_KEY_FILE: writeIssuerKeyFile().file });
  try {
    const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'nobody', client_secret: 'x' });
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(`${listening.url}/oauth2/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': String(body.toString().length),
          'x-request-id': 'body-scope-1',
          // Node answers 100 Continue as it hands the request to the app: the body is sent only after that.
          expect: '100-continue',
        },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on('error', reject);
      req.flushHeaders();
      // The body comes in a later packet, so it is read in a later event than the one the request began in.
      req.once('continue', () => req.end(body.toString()));
    });
    expect(status).toBe(401);
    const failed = listening.logs.lines.filter((l) => l.msg === 'client authentication failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ context: 'TokenIssuer', level: 40, req: { id: 'body-scope-1', method: 'POST' } });
  } finally {
    await listening.close();
  }
});

it('logs a request answered by the edge hook (405) and an unknown path (404) once each', async () => {
  const patch = await api.app.inject({ method: 'PATCH', url: '/tags', headers: { 'x-request-id': 'edge-405-1' } });
  expect(patch.statusCode).toBe(405);
  expect(requestLines('edge-405-1')).toEqual([expect.objectContaining({ level: 30, res: { statusCode: 405 } })]);
  const missing = await call(api, 'GET', '/no-such-path', { headers: { 'x-request-id': 'missing-1' } });
  expect(missing.statusCode).toBe(404);
  expect(requestLines('missing-1')).toEqual([expect.objectContaining({ level: 30, res: { statusCode: 404 } })]);
});

it('logs every access refusal as one warning line naming the route and the token identity, never the token', async () => {
  const token = await callers.reader('h-log', { sid: 'svc-log', env: 'prod' });
  const res = await call(api, 'POST', '/tags', { token, body: { tagName: 'refused' } });
  expect(res.statusCode).toBe(403);
  const id = res.headers['x-request-id'] as string;
  const refusals = api.logs.lines.filter(
    (l) => (l.req as { id?: string } | undefined)?.id === id && l.msg === 'access refused: capability',
  );
  expect(refusals).toEqual([
    expect.objectContaining({
      level: 40,
      endpoint: '/tags',
      sub: 'r-h-log',
      tokenHost: 'h-log',
      tokenSid: 'svc-log',
      tokenEnv: 'prod',
      required: 'tags:write',
      reason: 'capability',
    }),
  ]);
  expect(api.logs.raw.join('\n')).not.toContain(token.split('.')[2]);
});
