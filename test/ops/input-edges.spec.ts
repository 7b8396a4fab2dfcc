import { operatorPrincipal } from '#token-binding';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import { listenApi, sqlDuring, unique, type ListeningApi } from '../support/api.js';
import {
  RpcClient,
  startController,
  statementsDuring,
  UpgradeRefused,
  type TestController,
} from '../support/controller.js';
import { callers, token, writeIssuerKeyFile } from '../support/tokens.js';

// DESIGN 3 at the HTTP edge of both processes: the content types ordinary clients send, the query string's
// percent-encoding, a Bearer scheme without a token, HEAD on a refused query, and REQUEST_TIMEOUT_MS.
const TIMEOUT_MS = 1000;
let api: ListeningApi;
let controller: TestController;
let admin: string;

beforeAll(async () => {
  [api, controller] = await Promise.all([
    listenApi({ TOKEN_ISSUER_KEY_FILE: writeIssuerKeyFile().file, REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) }),
    startController({ REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) }),
  ]);
  admin = await callers.admin();
});
afterAll(async () => {
  await Promise.all([api?.close(), controller?.close()]);
});

interface RawAnswer {
  /** Everything the server sent before it closed the connection (or the wait ended). */
  readonly text: string;
  /** True when the server closed the connection; false when the wait ran out first. */
  readonly closed: boolean;
  /** Chunks not yet written when it ended: more than none means the server did not wait for the whole request. */
  readonly unsent: number;
}

/** Writes `chunks` on a fresh connection (`everyMs` apart) and reads until the server closes it. */
function rawExchange(base: string, chunks: readonly string[], everyMs = 0, waitMs = 5000): Promise<RawAnswer> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    let timer: NodeJS.Timeout | undefined;
    let next = 0;
    const done = (closed: boolean): void => {
      clearTimeout(timer);
      clearTimeout(cap);
      socket.destroy();
      resolve({ text, closed, unsent: chunks.length - next });
    };
    const cap = setTimeout(() => done(false), waitMs);
    socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
    socket.on('close', () => done(true));
    socket.on('error', () => done(true));
    const write = (): void => {
      if (next >= chunks.length || socket.destroyed) return;
      socket.write(chunks[next++] ?? '');
      timer = setTimeout(write, everyMs);
    };
    socket.on('connect', write);
  });
}

/** One HTTP/1.1 response parsed strictly off the front of `text`: status, headers, and where it ends. */
function firstResponse(text: string): { status: number; headers: Record<string, string>; rest: string } {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) throw new Error(`no complete response head in ${JSON.stringify(text.slice(0, 200))}`);
  const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
  const match = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine);
  if (match === null) throw new Error(`not a status line: ${JSON.stringify(statusLine)}`);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(match[1]), headers, rest: text.slice(end + 4) };
}

describe('the content types common clients send', () => {
  const tagBody = (): string => JSON.stringify({ tagName: unique('ct') });

  it.each([
    ['curl --json, Python requests json=', 'application/json', 201],
    ['Java OkHttp, .NET JsonContent, Go', 'application/json; charset=utf-8', 201],
    ['upper case, quoted charset', 'APPLICATION/JSON;CHARSET="UTF-8"', 201],
    ['another parameter', 'application/json; profile="x"; charset=UTF-8', 201],
    ['a +json type (DESIGN 3: not application/json)', 'application/merge-patch+json; charset=utf-8', 415],
    ['a vendor +json type', 'application/vnd.api+json', 415],
    ['latin1', 'application/json;charset=latin1', 415],
    ['ISO-8859-1, quoted', 'application/json; charset="ISO-8859-1"', 415],
    ['UTF-16', 'application/json; charset=utf-16', 415],
    ['Node fetch with a string body', 'text/plain;charset=UTF-8', 415],
  ])('%s: %s is %i', async (_, type, status) => {
    const { result, queries } = await sqlDuring(() =>
      api.app.inject({
        method: 'POST',
        url: '/tags',
        payload: tagBody(),
        headers: { authorization: `Bearer ${admin}`, 'content-type': type },
      }),
    );
    expect(result.statusCode).toBe(status);
    if (status === 415) {
      expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(queries).toBe(0);
    }
  });

  it('Node fetch over a real socket: a JSON body with its type is created, a bare string body is 415', async () => {
    const headers = { authorization: `Bearer ${admin}` };
    const typed = await fetch(`${api.url}/tags`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: tagBody(),
    });
    expect(typed.status).toBe(201);
    const untyped = await fetch(`${api.url}/tags`, { method: 'POST', headers, body: tagBody() });
    expect(untyped.status).toBe(415);
    expect(untyped.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  describe('the token endpoint form', () => {
    let client: { clientId: string; clientSecret: string };
    beforeAll(async () => {
      const { ClientsService } = await import('../../apps/api/token-issuer/clients.service.js');
      client = await api.app
        .get(ClientsService)
        .create(operatorPrincipal('test'), { clientId: unique('ct'), scopes: ['portal.admin'], envs: [] });
    });

    it.each([
      ['application/x-www-form-urlencoded', 200],
      ['application/x-www-form-urlencoded; charset=utf-8', 200],
      ['Application/X-WWW-Form-Urlencoded;Charset="UTF-8"', 200],
      // RFC 6749 5.2 (DESIGN 10): a body the token endpoint cannot read is invalid_request, not 415.
      ['application/x-www-form-urlencoded; charset=iso-8859-1', 400],
    ])('%s is %i', async (type, status) => {
      const res = await fetch(`${api.url}/oauth2/token`, {
        method: 'POST',
        headers: { 'content-type': type },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: client.clientId,
          client_secret: client.clientSecret,
        }).toString(),
      });
      expect(res.status).toBe(status);
      if (status === 200) expect(await res.json()).toMatchObject({ token_type: 'Bearer' });
    });

    // Each once answered 500: the form parser collected fields in an object, where these names are inherited.
    it.each(['__proto__', 'constructor', 'hasOwnProperty'])(
      'a field named %s is one more unknown field',
      async (name) => {
        const post = (fields: Record<string, string>) =>
          fetch(`${api.url}/oauth2/token`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: `${name}=x&${new URLSearchParams(fields).toString()}`,
          });
        const alone = await post({ grant_type: 'client_credentials' });
        expect([alone.status, await alone.json()]).toEqual([401, expect.objectContaining({ error: 'invalid_client' })]);
        const { clientId, clientSecret } = client;
        const issued = await post({
          grant_type: 'client_credentials',
          client_id: clientId,
          client_secret: clientSecret,
        });
        expect([issued.status, await issued.json()]).toEqual([200, expect.objectContaining({ token_type: 'Bearer' })]);
      },
    );
  });
});

describe('malformed percent-encoding in the query string is 400 problem+json, in both processes', () => {
  const MALFORMED = [
    ['a non-hex escape', 'tagName=%zz'],
    ['a lone percent sign', 'tagName=%'],
    ['a truncated escape', 'tagName=ab%4'],
    ['a truncated UTF-8 sequence', 'tagName=%E2%82'],
    ['an overlong encoding of /', 'tagName=%C0%AF'],
    ['an encoded surrogate half', 'tagName=%ED%A0%80'],
    ['in a parameter name', 'tag%zzName=x'],
  ] as const;

  it.each(MALFORMED)('api: %s (%s), before authentication and SQL', async (_, query) => {
    const { result, queries } = await sqlDuring(() => api.app.inject({ method: 'GET', url: `/tags?${query}` }));
    expect(result.statusCode).toBe(400);
    expect(result.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(result.json()).toMatchObject({ status: 400, detail: 'Malformed percent-encoding in the query string' });
    expect(queries).toBe(0);
  });

  it('api: the parameter is named', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/tags?limit=5&tagName=%C0%AF' });
    expect(res.json<{ errors: unknown[] }>().errors).toEqual([
      { field: 'tagName', message: 'tagName is not valid percent-encoded UTF-8' },
    ]);
  });

  it.each(MALFORMED)('controller GET /instances: %s (%s)', async (_, query) => {
    const { result, registry } = await statementsDuring(() =>
      fetch(`${controller.httpUrl}/instances?${query.replace('tagName', 'hostId')}`, {
        headers: { authorization: `Bearer ${admin}` },
      }),
    );
    expect(result.status).toBe(400);
    expect(result.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(registry).toEqual([]);
  });

  it('valid escapes still work: UTF-8, a plus sign and an encoded percent sign', async () => {
    const res = await api.app.inject({
      method: 'GET',
      url: '/tags?tagName=%E2%82%AC%2B%25&q=a+b',
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(res.statusCode).toBe(200);
  });
});

describe('a Bearer scheme without a token is a malformed credential: 401 invalid_token', () => {
  it.each([
    ['Bearer alone', 'Bearer'],
    ['Bearer and a space', 'Bearer '],
    ['Bearer and spaces', 'Bearer    '],
    ['Bearer and a tab', 'Bearer\t'],
  ])('HTTP: %s', async (_, authorization) => {
    const { result, queries } = await sqlDuring(() =>
      api.app.inject({ method: 'GET', url: '/tags', headers: { authorization } }),
    );
    expect(result.statusCode).toBe(401);
    expect(result.headers['www-authenticate']).toBe('Bearer realm="bindery", error="invalid_token"');
    expect(queries).toBe(0);
  });

  it.each([
    ['another scheme', 'Basic YWxpY2U6cHc='],
    ['an empty header', ''],
    ['only spaces', '   '],
  ])('HTTP: %s stays "no credentials", without an error code', async (_, authorization) => {
    const res = await api.app.inject({ method: 'GET', url: '/tags', headers: { authorization } });
    expect(res.statusCode).toBe(401);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="bindery"');
  });

  it('WebSocket upgrade: `Bearer` alone is refused with 401 invalid_token', async () => {
    const refused = await RpcClient.connect(controller.wsUrl, { headers: { authorization: 'Bearer ' } }).then(
      async (client) => {
        await client.close();
        return undefined;
      },
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(UpgradeRefused);
    expect((refused as UpgradeRefused).status).toBe(401);
    expect((refused as UpgradeRefused).headers['www-authenticate']).toBe(
      'Bearer realm="bindery", error="invalid_token"',
    );
  });
});

describe('HEAD on a GET route whose query is refused: a complete response without a body', () => {
  const SOME_ID = 'AAAAAAAAAAAAAAAAAAAAAA';

  /** Every GET route of a process, from its OpenAPI document, path ids filled, with its query parameters. */
  async function getRoutes(base: string): Promise<{ url: string; query: string[] }[]> {
    const doc = (await fetch(`${base}/docs/openapi.json`).then((r) => r.json())) as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
    };
    return Object.entries(doc.paths).flatMap(([path, operations]) =>
      operations.get === undefined
        ? []
        : [
            {
              url: path.replace(/\{\w+\}/g, SOME_ID),
              query: (operations.get.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
            },
          ],
    );
  }

  /** HEAD, then a GET pipelined on the same connection: the GET is answered only if HEAD's framing was right. */
  async function headThenGet(base: string, target: string): Promise<{ head: number; type?: string }> {
    const auth = `Authorization: Bearer ${admin}\r\n`;
    const answer = await rawExchange(base, [
      `HEAD ${target} HTTP/1.1\r\nHost: x\r\n${auth}\r\n` +
        `GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
    ]);
    const head = firstResponse(answer.text);
    // No body after HEAD's head: the next bytes are the pipelined GET's status line.
    const next = firstResponse(head.rest);
    expect(next.status).toBe(200);
    expect(next.rest).toBe('{"status":"ok"}');
    expect(answer.closed).toBe(true);
    return { head: head.status, type: head.headers['content-type'] };
  }

  async function statusOfGet(base: string, target: string): Promise<{ status: number; type: string | null }> {
    const res = await fetch(`${base}${target}`, {
      headers: { authorization: `Bearer ${admin}` },
      signal: AbortSignal.timeout(5000),
    });
    await res.body?.cancel();
    return { status: res.status, type: res.headers.get('content-type') };
  }

  it.each([
    ['api', () => api.url],
    ['controller', () => controller.httpUrl],
  ])('%s: every GET route, offset=1e400, a control character, malformed percent-encoding', async (_, base) => {
    const routes = await getRoutes(base());
    expect(routes.length).toBeGreaterThan(2);
    let checked = 0;
    for (const route of routes) {
      const targets = [`${route.url}?zz=%1B`, `${route.url}?zz=%C0%AF`];
      if (route.query.includes('offset')) targets.push(`${route.url}?offset=1e400`);
      for (const target of targets) {
        const get = await statusOfGet(base(), target);
        expect([target, get.status >= 400]).toEqual([target, true]);
        const head = await headThenGet(base(), target);
        expect([target, head.head, head.type]).toEqual([target, get.status, get.type]);
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(routes.length);
  });
});

describe('requests Node answers or drops by itself are problem+json, and a HEAD answer has no body', () => {
  const BASES = [
    ['api', () => api.url],
    ['controller', () => controller.httpUrl],
  ] as const;

  it.each(BASES)('%s: HTTP/1.1 without Host is 400 problem+json', async (_, base) => {
    const answer = await rawExchange(base(), ['GET /health/live HTTP/1.1\r\nConnection: close\r\n\r\n']);
    const response = firstResponse(answer.text);
    expect(response.status).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(response.rest)).toMatchObject({ status: 400, detail: 'The Host header is required' });
  });

  it.each(BASES)('%s: HTTP/1.0 needs no Host', async (_, base) => {
    const answer = await rawExchange(base(), ['GET /health/live HTTP/1.0\r\n\r\n']);
    expect(firstResponse(answer.text).status).toBe(200);
  });

  it.each(BASES)('%s: CONNECT is answered (405 with Allow on a known path, else 404), not dropped', async (_, base) => {
    const known = firstResponse((await rawExchange(base(), ['CONNECT /health/live HTTP/1.1\r\nHost: x\r\n\r\n'])).text);
    expect(known.status).toBe(405);
    expect(known.headers.allow).toBe('GET, HEAD');
    expect(known.headers['content-type']).toBe('application/problem+json');
    expect(JSON.parse(known.rest)).toMatchObject({ status: 405 });
    const unknown = firstResponse(
      (await rawExchange(base(), ['CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n'])).text,
    );
    expect(unknown.status).toBe(404);
  });

  it.each([
    ['a space in the query', 'HEAD /tags?a= 1 HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['header fields too large', `HEAD /health/live HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`, 431],
  ])('%s: a HEAD request Node refuses is answered without a body', async (_, text, status) => {
    for (const base of [api.url, controller.httpUrl]) {
      const answer = await rawExchange(base, [text]);
      const response = firstResponse(answer.text);
      expect(response.status).toBe(status);
      expect(Number(response.headers['content-length'])).toBeGreaterThan(0);
      expect(response.rest).toBe('');
      expect(answer.closed).toBe(true);
    }
  });
});

describe('REQUEST_TIMEOUT_MS: a slow client is answered 408 or closed by then', () => {
  /** A request whose headers (or body) trickle in one byte every 200 ms and would take far longer than 1 s. */
  const SLOW_HEADERS = `GET /health/live HTTP/1.1\r\nHost: x\r\nX-Slow: ${'a'.repeat(100)}\r\n\r\n`;
  const SLOW_BODY = `POST /tags HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`;
  /** Bounds the wait, well below the 20 s and more the trickles take: a server that waits them out fails. */
  const WAIT_MS = 12_000;

  function expectTimedOut(answer: RawAnswer): void {
    // Closed by the server while the client was still sending: the request timed out, it was not served.
    expect(answer.closed).toBe(true);
    expect(answer.unsent).toBeGreaterThan(0);
    // Either nothing (closed) or a 408 problem+json.
    if (answer.text !== '') {
      const response = firstResponse(answer.text);
      expect(response.status).toBe(408);
      expect(response.headers['content-type']).toBe('application/problem+json');
      expect(JSON.parse(response.rest)).toMatchObject({ status: 408 });
    }
  }

  it.each([
    ['api', () => api.url],
    ['controller', () => controller.httpUrl],
  ])('%s: headers one byte at a time', async (_, base) => {
    expectTimedOut(await rawExchange(base(), [...SLOW_HEADERS], 200, WAIT_MS));
  });

  it.each([
    ['api', () => api.url],
    ['controller', () => controller.httpUrl],
  ])('%s: a body one byte at a time', async (_, base) => {
    const body = [...`{"tagName":"${'x'.repeat(85)}"}`];
    expectTimedOut(await rawExchange(base(), [SLOW_BODY, ...body], 200, WAIT_MS));
  });

  it('a WebSocket outlives the request timeout: it is no longer a request in progress', async () => {
    const client = await RpcClient.connect(controller.wsUrl, { token: await token({ host: controller.hostId }) });
    try {
      // A request begun after the upgrade times out: the server's check has passed the socket's time by then.
      expectTimedOut(await rawExchange(controller.httpUrl, [...SLOW_HEADERS], 200, WAIT_MS));
      const answer = await client.call('discovery/lookup', { serviceId: unique('slow') });
      expect(answer.result).toMatchObject({ nodes: [] });
    } finally {
      await client.close();
    }
  });

  it('a request that arrives in time is served', async () => {
    const answer = await rawExchange(
      api.url,
      ['GET /health/live HTTP/1.1\r\n', 'Host: x\r\nConnection: close\r\n\r\n'],
      300,
    );
    expect(firstResponse(answer.text).status).toBe(200);
  });
});
