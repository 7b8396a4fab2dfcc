import { request as httpRequest } from 'node:http';
import WebSocket from 'ws';

/** One HTTP answer, whole (an event stream: its headers only). */
export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

export interface RequestOptions {
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  readonly timeoutMs?: number;
}

/**
 * An HTTP request on a connection of its own (no keep-alive): a replica that stopped listening refuses the
 * connect, so the caller knows the request never reached it and may send it elsewhere, as a balancer does.
 */
export function send(url: string, options: RequestOptions = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {
      method: options.method ?? 'GET',
      headers: options.headers,
      agent: false,
      timeout: options.timeoutMs ?? 15_000,
    });
    req.once('timeout', () => req.destroy(new Error(`no answer from ${url} in ${options.timeoutMs ?? 15_000} ms`)));
    req.once('error', (error) => {
      error.message = `${options.method ?? 'GET'} ${url}: ${error.message}`;
      reject(error);
    });
    req.once('response', (res) => {
      // A stream never ends: its status and headers are the answer.
      if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '' });
        res.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.once('error', reject);
      res.once('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    req.end(options.body);
  });
}

/** The connect itself failed: nothing was sent, so another replica may take the request. */
export const refused = (error: unknown): boolean =>
  ['ECONNREFUSED', 'ECONNRESET'].includes((error as { code?: string }).code ?? '') &&
  (error as { syscall?: string }).syscall === 'connect';

export type Frame = Record<string, unknown> & {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: Record<string, unknown> };
};

/** A JSON-RPC socket to a controller: answers by id, notifications kept, the close code remembered. */
export class Rpc {
  readonly notifications: Frame[] = [];
  readonly closed: Promise<number>;
  private readonly pending = new Map<number, { resolve: (f: Frame) => void; reject: (e: Error) => void }>();
  private next = 1;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const frame = JSON.parse((data as Buffer).toString('utf8')) as Frame;
      if (frame.id === undefined) this.notifications.push(frame);
      else this.pending.get(frame.id)?.resolve(frame);
    });
    this.closed = new Promise((resolve) =>
      socket.once('close', (code: number) => {
        for (const { reject } of this.pending.values()) reject(new Error(`socket closed ${code} before the answer`));
        resolve(code);
      }),
    );
  }

  static open(url: string, jwt: string, timeoutMs = 10_000): Promise<Rpc> {
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${jwt}` } });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        socket.terminate();
        reject(new Error(`no upgrade from ${url} in ${timeoutMs} ms`));
      }, timeoutMs);
      socket.once('open', () => {
        clearTimeout(timer);
        resolve(new Rpc(socket));
      });
      socket.once('error', (error) => {
        clearTimeout(timer);
        error.message = `${url}: ${error.message}`;
        reject(error);
      });
      socket.once('unexpected-response', (_req, res) => {
        clearTimeout(timer);
        const retryAfter = res.headers['retry-after'];
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString('utf8')));
        res.once('close', () => {
          socket.terminate();
          const message = `${url}: upgrade refused ${res.statusCode} (${res.headers['content-type']}) ${body}`;
          reject(Object.assign(new Error(message), { status: res.statusCode, retryAfter }));
        });
      });
    });
  }

  call(method: string, params: unknown, timeoutMs = 15_000): Promise<Frame> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${method}: no answer in ${timeoutMs} ms`)), timeoutMs);
      const settle = (): void => {
        clearTimeout(timer);
        this.pending.delete(id);
      };
      this.pending.set(id, {
        resolve: (frame) => {
          settle();
          resolve(frame);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      this.socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  /** The node set last sent to `subscriptionId` (its `discovery/changed`), if any. */
  lastNodes(subscriptionId: string): { runtimeInstanceId: string }[] | undefined {
    const changes = this.notifications.filter(
      (f) => f.method === 'discovery/changed' && f.params?.subscriptionId === subscriptionId,
    );
    return changes.at(-1)?.params?.nodes as { runtimeInstanceId: string }[] | undefined;
  }

  close(): void {
    this.socket.terminate();
  }
}

/** An answer that means "the server failed": a 5xx status, or JSON-RPC's internal and unavailable errors. */
export function rpcFailed(frame: Frame): boolean {
  const status = frame.error?.data?.status;
  return frame.error?.code === -32603 || frame.error?.code === -32004 || (typeof status === 'number' && status >= 500);
}

/**
 * A load balancer's view of a set of replicas: each request goes to the next member in rotation; when that
 * member turns it away before taking it (`retry`: by default a refused connect), the others are tried.
 */
export class Balancer<T> {
  private turn = 0;

  constructor(readonly members: T[]) {}

  async route<R>(attempt: (member: T) => Promise<R>, retry = refused): Promise<{ value: R; member: T }> {
    const start = this.turn++;
    const tried = [...this.members];
    let lastError: unknown = new Error('no member in rotation');
    for (let i = 0; i < tried.length; i++) {
      const member = tried[(start + i) % tried.length];
      try {
        return { value: await attempt(member), member };
      } catch (error) {
        if (!retry(error)) throw error;
        lastError = error;
      }
    }
    throw lastError;
  }

  add(member: T): void {
    this.members.push(member);
  }

  remove(member: T): void {
    this.members.splice(this.members.indexOf(member), 1);
  }
}

/** An upgrade answered 503 with Retry-After (a controller stopping): the client may go elsewhere. */
export const unavailable = (error: unknown): boolean =>
  (error as { status?: number }).status === 503 && (error as { retryAfter?: string }).retryAfter !== undefined;

/**
 * A discovery subscriber behind the balancer: subscribes, and when its controller goes away (or turns it
 * away with 503 and Retry-After) subscribes again on another one.
 */
export class Subscriber {
  readonly closes: number[] = [];
  readonly failures: string[] = [];
  private current: { socket: Rpc; subscriptionId: string; initial: string[] } | undefined;
  /** The socket the loop holds now (subscribed or not): the one `stop()` closes. */
  private open: Rpc | undefined;
  private running = true;
  private readonly loop: Promise<void>;

  constructor(controllers: Balancer<{ ws: string }>, serviceId: string, jwt: string) {
    this.loop = (async () => {
      while (this.running) {
        let socket: Rpc;
        try {
          ({ value: socket } = await controllers.route(
            (c) => Rpc.open(c.ws, jwt),
            (e) => refused(e) || unavailable(e),
          ));
        } catch (error) {
          if (unavailable(error)) continue;
          this.failures.push(`subscriber: no controller: ${(error as Error).message}`);
          return;
        }
        // Stopped while it connected: nobody would close this one.
        if (!this.running) return socket.close();
        this.open = socket;
        const answer = await socket.call('discovery/subscribe', { serviceId }).catch(() => undefined);
        if (answer?.result !== undefined) {
          const nodes = (answer.result.nodes ?? []) as { runtimeInstanceId: string }[];
          this.current = {
            socket,
            subscriptionId: String(answer.result.subscriptionId),
            initial: nodes.map((node) => node.runtimeInstanceId),
          };
        } else if (answer !== undefined) this.failures.push(`subscribe: ${JSON.stringify(answer.error)}`);
        this.closes.push(await socket.closed);
      }
    })();
  }

  /** The node set it knows now: its subscription's last notification, else the subscribe answer. */
  known(): string[] {
    if (this.current === undefined) return [];
    const last = this.current.socket.lastNodes(this.current.subscriptionId);
    return (last === undefined ? this.current.initial : last.map((node) => node.runtimeInstanceId)).sort();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.open?.close();
    await this.loop;
  }
}
