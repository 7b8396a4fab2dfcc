import { ApiError, problemDetail } from './api.js';

export interface StreamEvent {
  readonly event: string;
  readonly data: string;
}

export interface StreamHandlers {
  onEvent(event: StreamEvent): void;
  /** `true` while connected; `false` from a failure until the next successful connect. */
  onConnection(connected: boolean): void;
  /** The api refused the stream (401/403), or ended it because the token expired: retrying would not help. */
  onRefused(error: ApiError): void;
}

const RETRY_MS = 2000;

/**
 * Follows a `text/event-stream` with fetch, so the token travels in the Authorization header (EventSource
 * cannot send one). Reconnects after any failure until `signal` aborts.
 */
export async function followStream(
  token: string,
  path: string,
  handlers: StreamHandlers,
  signal: AbortSignal,
): Promise<void> {
  while (!signal.aborted) {
    try {
      const response = await fetch(path, {
        headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' },
        signal,
        cache: 'no-store',
      });
      if (response.status === 401 || response.status === 403) {
        handlers.onRefused(new ApiError(response.status, await problemDetail(response)));
        return;
      }
      if (!response.ok || response.body === null) throw new Error(`stream answered ${response.status}`);
      handlers.onConnection(true);
      let expired = false;
      await readEvents(response.body, (event) => {
        if (event.event === 'expired') expired = true;
        else handlers.onEvent(event);
      });
      // The api ends a stream when its token stops being accepted (DESIGN 8): this token cannot reconnect.
      if (expired) {
        handlers.onRefused(new ApiError(401, 'The token has expired; sign in with a new one.'));
        return;
      }
    } catch {
      if (signal.aborted) return;
    }
    handlers.onConnection(false);
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
}

async function readEvents(body: ReadableStream<Uint8Array>, onEvent: (event: StreamEvent) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    buffered += decoder.decode(value, { stream: true }).replace(/\r\n/g, '\n');
    let end: number;
    while ((end = buffered.indexOf('\n\n')) >= 0) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (data.length > 0) onEvent({ event, data: data.join('\n') });
    }
  }
}
