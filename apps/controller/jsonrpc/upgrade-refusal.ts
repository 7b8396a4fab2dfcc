import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { lingeringEnd, PROBLEM_CONTENT_TYPE, titleFor, type Problem } from '#platform';
import { BEARER_REALM } from '#token-binding';

/**
 * Answers an HTTP upgrade request that is not upgraded, as problem+json like every HTTP error (DESIGN 3 and
 * 8), on the raw socket, then closes it. ws's own refusals (`verifyClient`'s `accept(false, ...)`, its
 * handshake checks) write `text/html`, so every refusal of the controller goes through here instead.
 */
export function refuseUpgrade(
  request: IncomingMessage,
  socket: Duplex,
  status: number,
  detail: string,
  headers: Readonly<Record<string, string>> = {},
): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const problem: Problem = { type: 'about:blank', title: titleFor(status), status, detail };
  const body = JSON.stringify(problem);
  const fields: Record<string, string> = {
    ...headers,
    Connection: 'close',
    'Content-Type': PROBLEM_CONTENT_TYPE,
    'Content-Length': String(Buffer.byteLength(body)),
  };
  const head =
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
    Object.entries(fields)
      .map(([name, value]) => `${name}: ${value}`)
      .join('\r\n') +
    '\r\n\r\n';
  // Lingering close: the client may still be sending, and closing on unread input resets the answer away.
  // HEAD answers like GET without a body (DESIGN 3).
  lingeringEnd(socket, request.method === 'HEAD' ? head : head + body);
}

/** Seconds a client refused with 503 is asked to wait (DESIGN 2: `Retry-After` on the 503). */
const RETRY_AFTER_SEC = 5;

/** 401 for an upgrade whose bearer credential is malformed or fails verification (DESIGN 8). */
export function refuseInvalidToken(request: IncomingMessage): void {
  refuseUpgrade(request, request.socket, 401, 'The bearer token is invalid', {
    'WWW-Authenticate': `${BEARER_REALM}, error="invalid_token"`,
  });
}

/** 503 with `Retry-After` (DESIGN 3): the client may try again soon, here or on another replica. */
export function refuseUnavailable(request: IncomingMessage, detail: string): void {
  refuseUpgrade(request, request.socket, 503, detail, { 'Retry-After': String(RETRY_AFTER_SEC) });
}
