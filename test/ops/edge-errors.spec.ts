import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import { listenApi, sqlDuring, startApi, unique, type ListeningApi, type TestApi } from '../support/api.js';
import { callers } from '../support/tokens.js';

// DESIGN 3: refusals of the transport and the body format come first, as problem+json, before any SQL.
let api: TestApi;
let admin: string;

beforeAll(async () => {
  api = await startApi();
  admin = await callers.admin();
});
afterAll(() => api.close());

const nested = (depth: number, open: string, close: string, leaf = '1'): string =>
  `${open.repeat(depth)}${leaf}${close.repeat(depth)}`;

describe('JSON nested deeper than 32 levels is 400 before validation', () => {
  it.each([
    ['arrays on POST /tags', 'POST', '/tags', `{"tagName":"x","tagDesc":${nested(5000, '[', ']')}}`],
    ['objects on POST /tags', 'POST', '/tags', `{"tagName":"x","tagDesc":${nested(5000, '{"a":', '}')}}`],
    ['arrays on POST /schemas', 'POST', '/schemas', nested(40, '[', ']')],
    ['33 levels on PUT /tags/x', 'PUT', '/tags/x', `{"a":${nested(32, '{"a":', '}')}}`],
  ] as const)('%s', async (_, method, url, payload) => {
    const { result, queries } = await sqlDuring(() =>
      api.app.inject({
        method,
        url,
        payload,
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      }),
    );
    expect(result.statusCode).toBe(400);
    expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(result.json<{ detail: string }>().detail).toMatch(/nested/);
    expect(queries).toBe(0);
  });

  it('32 levels are still parsed (and then validated)', async () => {
    const res = await api.app.inject({
      method: 'POST',
      url: '/tags',
      payload: `{"tagName":"${unique('deep')}","tagDesc":${nested(31, '[', ']')}}`,
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(400);
    expect([...new Set(res.json<{ errors: { field: string }[] }>().errors.map((e) => e.field))]).toEqual(['tagDesc']);
  });
});

describe('a body that is not JSON on a JSON route is 415', () => {
  it.each([
    ['form encoding (curl -d)', 'application/x-www-form-urlencoded', 'tagName=x'],
    ['plain text', 'text/plain', '{"tagName":"x"}'],
  ])('%s', async (_, type, payload) => {
    const { result, queries } = await sqlDuring(() =>
      api.app.inject({
        method: 'POST',
        url: '/tags',
        payload,
        headers: { authorization: `Bearer ${admin}`, 'content-type': type },
      }),
    );
    expect(result.statusCode).toBe(415);
    expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(queries).toBe(0);
  });
});

describe('HEAD answers like GET without a body', () => {
  it.each(['/health/live', '/health/ready', '/tags'])('%s', async (url) => {
    const headers = { authorization: `Bearer ${admin}` };
    const get = await api.app.inject({ method: 'GET', url, headers });
    const head = await api.app.inject({ method: 'HEAD', url, headers });
    expect(head.statusCode).toBe(get.statusCode);
    expect(head.body).toBe('');
    expect(head.headers['content-type']).toBe(get.headers['content-type']);
  });
});

describe('errors produced before a route runs are problem+json', () => {
  it.each([
    ['an unknown path', 'GET', '/nope', 404],
    ['bad percent-encoding', 'GET', '/tags/%E0%A4%A', 400],
  ] as const)('%s', async (_, method, url, status) => {
    const res = await api.app.inject({ method, url, headers: { authorization: `Bearer ${admin}` } });
    expect(res.statusCode).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status });
  });
});

describe('an unknown method on a known path is 405 with Allow', () => {
  it.each([
    ['PATCH', '/tags', 'GET, HEAD, POST'],
    ['POST', '/tags/abc', 'GET, HEAD, PUT, DELETE'],
  ] as const)('%s %s', async (method, url, allow) => {
    const { result, queries } = await sqlDuring(() =>
      api.app.inject({ method, url, headers: { authorization: `Bearer ${admin}` } }),
    );
    expect(result.statusCode).toBe(405);
    expect(result.headers.allow).toBe(allow);
    expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(queries).toBe(0);
  });
});

describe('requests Node refuses before Fastify are problem+json', () => {
  let listening: ListeningApi;
  beforeAll(async () => {
    listening = await listenApi();
  });
  afterAll(() => listening.close());

  /** Sends raw request text and reads the whole answer. */
  function raw(text: string): Promise<string> {
    const { hostname, port } = new URL(listening.url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write(text));
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
      socket.on('end', () => resolve(answer));
      socket.on('error', reject);
    });
  }

  it.each(['/health/live', '/health/ready', '/docs/openapi.json'])(
    'HEAD %s over a real socket parses cleanly, without a body',
    async (path) => {
      const answer = await raw(`HEAD ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      expect(answer.startsWith('HTTP/1.1 200 ')).toBe(true);
      expect(answer.slice(answer.indexOf('\r\n\r\n') + 4)).toBe('');
      const res = await fetch(`${listening.url}${path}`, { method: 'HEAD' });
      expect(res.status).toBe(200);
    },
  );

  it.each([
    ['header fields too large', `GET /tags HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 431],
    ['a URI too long for the parser', `GET /tags?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 414],
    [
      'a URI over the limit but within the parser',
      `GET /tags?q=${'a'.repeat(9000)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      414,
    ],
    ['a method nobody knows', 'FROB /tags HTTP/1.1\r\nHost: x\r\n\r\n', 501],
    ['a malformed request line', 'GARBAGE\r\n\r\n', 400],
  ])('%s', async (_, text, status) => {
    const answer = await raw(text);
    expect(answer.startsWith(`HTTP/1.1 ${status} `)).toBe(true);
    expect(answer).toMatch(/content-type: application\/problem\+json/i);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ status });
  });
});

describe('one message per missing or repeated field', () => {
  it('a missing required field is named once', async () => {
    const res = await api.app.inject({
      method: 'POST',
      url: '/tags',
      payload: { tagDesc: 'no name' },
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json<{ errors: unknown[] }>().errors).toEqual([{ field: 'tagName', message: 'tagName is required' }]);
  });

  it('a repeated parameter says "must not be repeated" and nothing else', async () => {
    const res = await api.app.inject({
      method: 'GET',
      url: '/tags?limit=1&limit=2',
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json<{ errors: unknown[] }>().errors).toEqual([
      { field: 'limit', message: 'limit must not be repeated' },
    ]);
  });
});
