import { PassThrough, type Readable } from 'node:stream';
import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { ControlSession, REGISTRY_CHANNEL } from '#database';
import { endAt, ProblemException } from '#platform';

/** Event streams open at once per process (DESIGN 13); beyond, 503. */
export const MAX_STREAMS = 1000;
/** A comment line this often keeps proxies and the browser from closing an idle stream. */
export const HEARTBEAT_MS = 15_000;
/** A reader this far behind is dropped (it reconnects and re-reads) rather than buffered without bound. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
/** How long the browser's EventSource-style reader waits before reconnecting. */
const RETRY_MS = 2000;

/** One registry change: re-read `GET /registry/instances` (the payload names what changed, never the new state). */
export interface RegistryChange {
  readonly hostId: string;
  readonly serviceId: string;
}

/**
 * `GET /registry/changes` (DESIGN 13): the same `LISTEN bindery_registry` the controllers follow, fanned
 * out as `text/event-stream` to operators. Events: `ready` once, `change` per registry row change,
 * `resync` after the listening session reconnected (notifications may have been lost: re-read everything),
 * and `expired` just before the stream ends because its token is no longer accepted (DESIGN 8).
 */
@Injectable()
export class RegistryChangesService implements BeforeApplicationShutdown {
  private readonly logger = new Logger('RegistryChanges');
  /** Each open stream with the host it may see (undefined: a global admin's, every host). */
  private readonly streams = new Map<PassThrough, string | undefined>();
  private listening: Promise<void> | undefined;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(private readonly session: ControlSession) {}

  /**
   * A new stream, already listening: a change committed after this resolves is on it. At `expiresAtMs` it
   * sends `expired` and ends cleanly: the client reconnects with a newer token (or signs in again).
   */
  async open(expiresAtMs: number, host: string | undefined): Promise<Readable> {
    if (this.streams.size >= MAX_STREAMS) {
      throw new ProblemException(503, `More than ${MAX_STREAMS} registry streams are open; retry shortly`, {
        headers: { 'retry-after': '1' },
      });
    }
    await this.listen();
    const stream = new PassThrough();
    this.streams.set(stream, host);
    stream.write(`retry: ${RETRY_MS}\nevent: ready\ndata: {}\n\n`);
    const expiry = endAt(expiresAtMs, () => {
      this.streams.delete(stream);
      stream.end('event: expired\ndata: {}\n\n');
    });
    stream.on('close', () => {
      expiry.cancel();
      this.streams.delete(stream);
    });
    this.heartbeat ??= setInterval(() => this.broadcast(': ping\n\n'), HEARTBEAT_MS).unref();
    return stream;
  }

  get openStreams(): number {
    return this.streams.size;
  }

  beforeApplicationShutdown(): void {
    // Open streams would hold the HTTP server's close until the shutdown deadline.
    clearInterval(this.heartbeat);
    for (const stream of this.streams.keys()) stream.end();
  }

  private listen(): Promise<void> {
    this.listening ??= (async () => {
      this.session.onReconnect(() => this.broadcast('event: resync\ndata: {}\n\n'));
      await this.session.listen(REGISTRY_CHANNEL, (payload) => this.changed(payload));
    })().catch((error: unknown) => {
      this.listening = undefined;
      throw error;
    });
    return this.listening;
  }

  private changed(payload: string): void {
    let change: RegistryChange;
    try {
      const parsed = JSON.parse(payload) as Partial<RegistryChange>;
      change = { hostId: String(parsed.hostId), serviceId: String(parsed.serviceId) };
    } catch {
      this.logger.warn('a registry notification was not JSON');
      return;
    }
    // DESIGN 16: a host-bound reader learns nothing of another host's instances, not even that they changed.
    this.broadcast(`event: change\ndata: ${JSON.stringify(change)}\n\n`, change.hostId);
  }

  private broadcast(text: string, hostId?: string): void {
    for (const [stream, host] of this.streams) {
      if (hostId !== undefined && host !== undefined && host !== hostId) continue;
      if (stream.writableLength > MAX_BUFFERED_BYTES) stream.destroy();
      else stream.write(text);
    }
  }
}
