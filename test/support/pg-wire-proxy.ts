import { createServer, connect, type Server, type Socket } from 'node:net';

/** Start-up packets carry no type byte: the protocol version, SSLRequest, GSSENCRequest, CancelRequest. */
const PROTOCOL_3 = 196_608;

/**
 * A TCP proxy in front of a PostgreSQL server (or pooler) that reads what clients send: every Parse
 * message's statement name, so a test sees at the wire whether a process named its statements.
 */
export class PgWireProxy {
  /** Statement names of every Parse message, in order; '' is the unnamed statement. */
  readonly parsed: string[] = [];
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(target: { host: string; port: number }): Promise<PgWireProxy> {
    const holder: { proxy?: PgWireProxy } = {};
    const server = createServer((client) => holder.proxy?.relay(client, target));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    holder.proxy = new PgWireProxy(server, address.port);
    return holder.proxy;
  }

  /** `url` with its host and port replaced by the proxy's. */
  urlFor(url: string): string {
    const through = new URL(url);
    through.hostname = '127.0.0.1';
    through.port = String(this.port);
    return through.toString();
  }

  get named(): string[] {
    return this.parsed.filter((name) => name !== '');
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((done) => this.server.close(() => done()));
  }

  private relay(client: Socket, target: { host: string; port: number }): void {
    const upstream = connect(target.port, target.host);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    upstream.pipe(client);
    let pending = Buffer.alloc(0);
    let started = false;
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        if (!started) {
          if (pending.length < 8) break;
          const length = pending.readInt32BE(0);
          if (pending.length < length) break;
          started = pending.readInt32BE(4) === PROTOCOL_3;
          pending = pending.subarray(length);
          continue;
        }
        if (pending.length < 5) break;
        const length = pending.readInt32BE(1);
        if (pending.length < 1 + length) break;
        // Parse ('P'): the statement name is the body's first null-terminated string.
        if (pending[0] === 0x50) this.parsed.push(pending.toString('utf8', 5, pending.indexOf(0, 5)));
        pending = pending.subarray(1 + length);
      }
    });
  }
}
