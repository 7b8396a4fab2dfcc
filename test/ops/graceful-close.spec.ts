import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { afterAll, expect, it } from '@jest/globals';
import { listenApi, type ListeningApi } from '../support/api.js';

// DESIGN 15 (rolling upgrades): a stopping api answers every request it gets, on connections it already
// has: 503 with Retry-After to new ones, the real answer to those in flight, and each ends its connection.

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** One keep-alive connection, read one whole response at a time. */
class Connection {
  private buffer = '';
  private readonly socket: Socket;
  readonly ended: Promise<void>;

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.setEncoding('utf8');
    this.socket.on('data', (chunk: string) => (this.buffer += chunk));
    this.ended = once(this.socket, 'end').then(() => undefined);
  }

  send(text: string): void {
    this.socket.write(text);
  }

  async answer(): Promise<Answer> {
    for (;;) {
      const parsed = this.take();
      if (parsed !== undefined) return parsed;
      await once(this.socket, 'data');
    }
  }

  destroy(): void {
    this.socket.destroy();
  }

  private take(): Answer | undefined {
    const head = this.buffer.indexOf('\r\n\r\n');
    if (head < 0) return undefined;
    const [statusLine = '', ...lines] = this.buffer.slice(0, head).split('\r\n');
    const headers = Object.fromEntries(
      lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
    );
    const length = Number(headers['content-length'] ?? 0);
    if (this.buffer.length < head + 4 + length) return undefined;
    const body = this.buffer.slice(head + 4, head + 4 + length);
    this.buffer = this.buffer.slice(head + 4 + length);
    return { status: Number(statusLine.split(' ')[1]), headers, body };
  }
}

let api: ListeningApi | undefined;
const connections: Connection[] = [];
afterAll(async () => {
  connections.forEach((c) => c.destroy());
  await api?.close().catch(() => undefined);
});

it('once the close begins: a new request gets 503 with Retry-After, one in flight its answer, both end', async () => {
  api = await listenApi();
  const server = api.app.getHttpServer();
  const port = Number(new URL(api.url).port);
  const [idle, busy] = [new Connection(port), new Connection(port)];
  connections.push(idle, busy);

  idle.send('GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n');
  const before = await idle.answer();
  expect([before.status, before.headers.connection]).toEqual([200, 'keep-alive']);

  // In flight: its head is routed, its body still coming.
  const received = once(server, 'request');
  busy.send('POST /tags HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{');
  await received;

  // Fastify calls closeIdleConnections right after its preClose hooks ran: the close has begun.
  const begun = new Promise<void>((resolve) => {
    const closeIdle = server.closeIdleConnections.bind(server);
    server.closeIdleConnections = () => {
      closeIdle();
      resolve();
    };
  });
  const closed = api.close();
  await begun;

  idle.send('GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n');
  const refused = await idle.answer();
  expect(refused.status).toBe(503);
  expect(refused.headers).toMatchObject({
    'retry-after': '1',
    connection: 'close',
    'content-type': expect.stringMatching(/^application\/problem\+json\b/),
  });
  expect(JSON.parse(refused.body)).toMatchObject({ status: 503, title: 'Service Unavailable' });
  await idle.ended;

  busy.send('}');
  const answered = await busy.answer();
  expect([answered.status, answered.headers.connection]).toEqual([401, 'close']);
  await busy.ended;
  await closed;
});
