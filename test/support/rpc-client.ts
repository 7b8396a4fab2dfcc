import type { IncomingHttpHeaders } from 'node:http';
import WebSocket, { type RawData } from 'ws';
import { withTimeout } from './wait.js';

/** The upgrade was answered with an HTTP status instead of 101. */
export class UpgradeRefused extends Error {
  constructor(
    readonly status: number,
    readonly headers: IncomingHttpHeaders,
  ) {
    super(`upgrade refused with HTTP ${status}`);
  }
}

export interface Closed {
  readonly code: number;
  readonly reason: string;
}

type Fields = Readonly<Record<string, unknown>>;

export interface RpcResponse {
  readonly jsonrpc: string;
  readonly id: string | number | null;
  readonly result?: Fields;
  readonly error?: { readonly code: number; readonly message: string; readonly data?: Fields };
  /** Set on a notification (no id), such as `discovery/changed`. */
  readonly method?: string;
  readonly params?: Fields;
}

/** The `discovery/changed` notifications `client` has received for `subscriptionId`, oldest first. */
export function changesOf(client: RpcClient, subscriptionId: string): Fields[] {
  return (client.received as RpcResponse[]).flatMap((frame) =>
    frame.method === 'discovery/changed' && frame.params?.subscriptionId === subscriptionId ? [frame.params] : [],
  );
}

/** The `runtimeInstanceId` of a successful `service/register` answer. */
export function instanceIdOf(response: RpcResponse): string {
  const id = response.result?.runtimeInstanceId;
  if (typeof id !== 'string') throw new Error(`not a registration result: ${JSON.stringify(response)}`);
  return id;
}

export interface ConnectOptions {
  /** Sent as `Authorization: Bearer <token>`. */
  readonly token?: string;
  readonly headers?: Record<string, string>;
  /** False: the client never answers the server's pings (a silent peer). */
  readonly autoPong?: boolean;
}

/** A real WebSocket client speaking JSON-RPC, recording every frame it receives. */
export class RpcClient {
  private static readonly all = new Set<RpcClient>();
  readonly received: unknown[] = [];
  readonly closed: Promise<Closed>;
  private nextId = 1;
  private readonly listeners = new Set<() => void>();

  private constructor(
    readonly socket: WebSocket,
    readonly url: string,
  ) {
    RpcClient.all.add(this);
    this.closed = new Promise((resolve) => {
      socket.once('close', (code: number, reason: Buffer) => {
        RpcClient.all.delete(this);
        resolve({ code, reason: reason.toString('utf8') });
      });
    });
    socket.on('message', (data: RawData) => {
      const text = Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
      this.received.push(JSON.parse(text));
      for (const listener of this.listeners) listener();
    });
  }

  static connect(url: string, options: ConnectOptions = {}): Promise<RpcClient> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    const socket = new WebSocket(url, { headers, autoPong: options.autoPong ?? true });
    const opened = new Promise<RpcClient>((resolve, reject) => {
      socket.once('open', () => resolve(new RpcClient(socket, url)));
      socket.once('unexpected-response', (_request, response) => {
        response.resume();
        reject(new UpgradeRefused(response.statusCode ?? 0, response.headers));
        socket.terminate();
      });
      // After a refusal, ws reports the aborted handshake as an error; the refusal above already settled.
      socket.on('error', reject);
    });
    return withTimeout(opened, `the upgrade to ${url}`);
  }

  /** Clients of `url` whose socket is open and not closing (as this side sees it). */
  static openTo(url: string): number {
    let open = 0;
    for (const client of RpcClient.all)
      if (client.url === url && client.socket.readyState === WebSocket.OPEN) open += 1;
    return open;
  }

  /** Sends one text frame exactly as given. */
  sendRaw(data: string | Buffer, binary = false): void {
    this.socket.send(data, { binary });
  }

  notify(method: string, params?: unknown): void {
    this.sendRaw(JSON.stringify({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) }));
  }

  /** Sends a request and waits for the response carrying its id. */
  async call(method: string, params?: unknown, id: string | number = this.nextId++): Promise<RpcResponse> {
    this.sendRaw(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }));
    return this.response((r) => r.id === id, `the response to ${method} (id ${id})`);
  }

  /** Waits for a received frame matching `match` (frames already received count). */
  response(match: (response: RpcResponse) => boolean, what = 'a response'): Promise<RpcResponse> {
    const find = (): RpcResponse | undefined =>
      (this.received as RpcResponse[]).find((r) => typeof r === 'object' && r !== null && match(r));
    const found = find();
    if (found !== undefined) return Promise.resolve(found);
    return withTimeout(
      new Promise<RpcResponse>((resolve) => {
        const listener = (): void => {
          const hit = find();
          if (hit === undefined) return;
          this.listeners.delete(listener);
          resolve(hit);
        };
        this.listeners.add(listener);
      }),
      what,
    );
  }

  /** The next frame after those already received. */
  next(what = 'the next frame'): Promise<RpcResponse> {
    const index = this.received.length;
    return this.response((r) => this.received.indexOf(r) >= index, what);
  }

  /**
   * A ping the server answers: every frame it sent on this socket before it read the ping has arrived by
   * then, so "nothing came" is certain for whatever the server did before. Fails if the socket closes first.
   */
  roundTrip(what = 'the answer to a ping'): Promise<void> {
    const payload = Buffer.from(`rt-${this.nextId++}`);
    const answered = new Promise<void>((resolve, reject) => {
      const onPong = (data: Buffer): void => {
        if (!data.equals(payload)) return;
        this.socket.off('pong', onPong);
        resolve();
      };
      this.socket.on('pong', onPong);
      void this.closed.then((closed) => {
        this.socket.off('pong', onPong);
        reject(new Error(`the socket closed (${closed.code} ${closed.reason}) before ${what}`));
      });
      this.socket.ping(payload);
    });
    return withTimeout(answered, what);
  }

  waitClosed(what = 'the socket to close'): Promise<Closed> {
    return withTimeout(this.closed, what);
  }

  async close(): Promise<Closed> {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.close(1000, 'done');
    return this.waitClosed();
  }
}
