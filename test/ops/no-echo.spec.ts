import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { listenApi, type ListeningApi } from '../support/api.js';
import { startController, type TestController } from '../support/controller.js';
import { callers } from '../support/tokens.js';

/**
 * DESIGN 3: no error answer echoes the request's query string or headers. Every odd request below carries
 * a secret marker in its query (as `?access_token=` would) and often in a header; no answer, head or body,
 * of either process may hold it. Raw HTTP, so the requests Node's parser and Fastify refuse are sent as is.
 */
const MARKER = `Sekret${randomBytes(8).toString('hex')}`;

let api: ListeningApi;
let controller: TestController;
let admin: string;

beforeAll(async () => {
  api = await listenApi();
  controller = await startController();
  admin = await callers.admin();
});

afterAll(async () => {
  await controller?.close();
  await api?.close();
});

/** Sends `text` on a fresh connection and resolves with everything that came back before it closed. */
function exchange(url: string, text: string): Promise<string> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1', () => socket.end(text));
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('close', () => resolve(answer));
    // A reset after the answer (a refused request still being sent): what was read is the answer.
    socket.on('error', () => socket.destroy());
  });
}

const request = (line: string, headers: readonly string[] = [], body = ''): string =>
  `${line}\r\n${['host: localhost', 'connection: close', ...headers].join('\r\n')}\r\n\r\n${body}`;

const q = `access_token=${MARKER}`;
const secretHeader = `x-api-key: ${MARKER}`;

/** [name, raw request, expected status] for either process; `path` is a route of that process. */
function oddRequests(path: string, subPath: string, bearer: string): [string, string, number][] {
  const auth = `authorization: Bearer ${bearer}`;
  return [
    ['an undecodable path (UTF-8 surrogate)', request(`GET ${subPath}/%ED%A0%80?${q} HTTP/1.1`, [secretHeader]), 400],
    ['a malformed escape in the path', request(`GET ${subPath}/%ZZ?${q} HTTP/1.1`), 400],
    ['the marker inside an undecodable path', request(`GET ${subPath}/${MARKER}%ED%A0%80?${q} HTTP/1.1`), 400],
    ['a malformed escape in a query value', request(`GET ${path}?limit=%ZZ&${q} HTTP/1.1`, [auth]), 400],
    ['the marker in an undecodable query value', request(`GET ${path}?access_token=${MARKER}%FF HTTP/1.1`), 400],
    ['the marker in an undecodable query name', request(`GET ${path}?${MARKER}%FF=1 HTTP/1.1`, [auth]), 400],
    ['the marker in a query name with a bad escape', request(`GET ${path}?${MARKER}%Z=1 HTTP/1.1`), 400],
    ['an unknown route with a query', request(`GET /no-such-route?${q} HTTP/1.1`, [secretHeader]), 404],
    ['an unknown route, HEAD', request(`HEAD /no-such-route?${q} HTTP/1.1`), 404],
    ['a method the path has no route for (405)', request(`DELETE ${path}?${q} HTTP/1.1`, [auth]), 405],
    ['a request target over 8192 characters', request(`GET ${path}?${q}&pad=${'x'.repeat(9000)} HTTP/1.1`), 414],
    ['a request line over Node’s 16 KiB', request(`GET ${path}?${q}&pad=${'x'.repeat(17_000)} HTTP/1.1`), 414],
    [
      'header fields over Node’s 16 KiB',
      request(`GET ${path}?${q} HTTP/1.1`, [secretHeader, `x-pad: ${'y'.repeat(17_000)}`]),
      431,
    ],
    ['an unknown method', request(`BREW ${path}?${q} HTTP/1.1`, [secretHeader]), 501],
    ['a malformed request line', request(`GET ${path}?${q} ${MARKER} HTTP/1.1`), 400],
    ['HTTP/1.1 without Host', `GET ${path}?${q} HTTP/1.1\r\nconnection: close\r\n\r\n`, 400],
    ['CONNECT', request(`CONNECT ${path}?${q} HTTP/1.1`), 405],
    ['CONNECT to an unknown path', request(`CONNECT /nowhere?${q} HTTP/1.1`), 404],
    ['no token', request(`GET ${path}?${q} HTTP/1.1`, [secretHeader]), 401],
    ['a token in an unknown scheme', request(`GET ${path}?${q} HTTP/1.1`, [`authorization: Basic ${MARKER}`]), 401],
    ['a malformed bearer token', request(`GET ${path}?${q} HTTP/1.1`, [`authorization: Bearer ${MARKER}`]), 401],
    ['an unknown query parameter', request(`GET ${path}?${q} HTTP/1.1`, [auth]), 400],
    ['the marker as a parameter name', request(`GET ${path}?${MARKER}=1 HTTP/1.1`, [auth]), 400],
    ['the marker as a bad limit', request(`GET ${path}?limit=${MARKER} HTTP/1.1`, [auth]), 400],
    ['a repeated limit', request(`GET ${path}?limit=1&limit=${MARKER} HTTP/1.1`, [auth]), 400],
    ['a control character in a parameter name', request(`GET ${path}?${MARKER}%01=1 HTTP/1.1`, [auth]), 400],
    ['a control character in a value', request(`GET ${path}?limit=%01${MARKER} HTTP/1.1`, [auth]), 400],
    ['a control character in an unknown parameter', request(`GET ${path}?${MARKER}=%01 HTTP/1.1`, [auth]), 400],
  ];
}

const statusOf = (answer: string): number => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);

describe('no error answer echoes the query string or headers (DESIGN 3)', () => {
  describe('the api', () => {
    it.each(oddRequests('/tags', '/tags', 'TOKEN'))('%s', async (_, raw, status) => {
      const answer = await exchange(api.url, raw.replaceAll('TOKEN', admin));
      expect(statusOf(answer)).toBe(status);
      expect(answer).not.toContain(MARKER);
    });

    it('the bad-JSON, 413 and 415 refusals of a POST with the marker in its query or content type', async () => {
      const post = (type: string, body: string) =>
        request(`POST /tags?${q} HTTP/1.1`, [`content-type: ${type}`, `content-length: ${body.length}`], body);
      const answers = await Promise.all([
        exchange(api.url, post('application/json', `{"tagName": "${MARKER}`)),
        exchange(api.url, post('text/plain', MARKER)),
        exchange(
          api.url,
          request(`POST /tags?${q} HTTP/1.1`, ['content-type: application/json', 'content-length: 2000000']),
        ),
        exchange(api.url, post(`application/json; charset=${MARKER}`, '{}')),
      ]);
      expect(answers.map(statusOf)).toEqual([400, 415, 413, 415]);
      for (const answer of answers) expect(answer).not.toContain(MARKER);
    });
  });

  it('an unknown sort key on the api', async () => {
    const answer = await exchange(
      api.url,
      request(`GET /tags?sort=${MARKER} HTTP/1.1`, [`authorization: Bearer ${admin}`]),
    );
    expect(statusOf(answer)).toBe(400);
    expect(answer).not.toContain(MARKER);
  });

  describe('the controller', () => {
    it('refused WebSocket upgrades: an unknown path, a bad handshake header, no token', async () => {
      const wsPath = new URL(controller.wsUrl).pathname;
      const upgrade = (target: string, headers: readonly string[]) =>
        `GET ${target} HTTP/1.1\r\n${['host: localhost', 'connection: upgrade', 'upgrade: websocket', 'sec-websocket-version: 13', ...headers].join('\r\n')}\r\n\r\n`;
      const key = 'sec-websocket-key: dGhlIHNhbXBsZSBub25jZQ==';
      const answers = await Promise.all([
        exchange(controller.httpUrl, upgrade(`/nowhere?${q}`, [key, secretHeader])),
        exchange(controller.httpUrl, upgrade(`${wsPath}?${q}`, [`sec-websocket-key: ${MARKER}`])),
        exchange(controller.httpUrl, upgrade(`${wsPath}?${q}`, [key, `authorization: Bearer ${MARKER}`])),
      ]);
      expect(answers.map(statusOf)).toEqual([404, 400, 401]);
      for (const answer of answers) expect(answer).not.toContain(MARKER);
    });

    it.each(oddRequests('/instances', '/health', 'TOKEN'))('%s', async (_, raw, status) => {
      const answer = await exchange(controller.httpUrl, raw.replaceAll('TOKEN', admin));
      expect(statusOf(answer)).toBe(status);
      expect(answer).not.toContain(MARKER);
    });
  });
});
