import { get, type ClientRequest, type IncomingMessage } from 'node:http';

/** One event of a `text/event-stream`. */
export interface ServerEvent {
  readonly event: string;
  readonly data: unknown;
}

/**
 * Reads a `text/event-stream`, collecting its events. node:http, not fetch: Node 20's fetch leaves the
 * socket open after an abort, which would hold the api's shutdown in these tests (browsers close it).
 */
export class EventReader {
  readonly events: ServerEvent[] = [];
  ended = false;
  /** When the response ended cleanly (its last chunk arrived), as opposed to a reset. */
  endedCleanlyAt: number | undefined;

  private constructor(
    readonly response: IncomingMessage,
    private readonly request: ClientRequest,
  ) {
    let buffered = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      buffered += chunk;
      let end: number;
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        this.parse(buffered.slice(0, end));
        buffered = buffered.slice(end + 2);
      }
    });
    response.on('end', () => (this.endedCleanlyAt = Date.now()));
    response.on('close', () => (this.ended = true));
  }

  static open(url: string, jwt: string): Promise<EventReader> {
    return new Promise((resolve, reject) => {
      const request = get(url, { headers: { authorization: `Bearer ${jwt}` } });
      request.once('response', (response) => resolve(new EventReader(response, request)));
      request.once('error', reject);
    });
  }

  close(): void {
    this.request.destroy();
  }

  private parse(block: string): void {
    const fields = new Map<string, string>();
    for (const line of block.split('\n')) {
      const colon = line.indexOf(':');
      if (colon > 0) fields.set(line.slice(0, colon), line.slice(colon + 1).trim());
    }
    const event = fields.get('event');
    if (event !== undefined) this.events.push({ event, data: JSON.parse(fields.get('data') ?? 'null') });
  }
}
