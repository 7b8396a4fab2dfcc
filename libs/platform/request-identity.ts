import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Accepts a well-formed incoming `X-Request-Id`, else makes one. */
export function requestId(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * The client's address for logs and limits: the socket's peer, or with TRUST_PROXY the last
 * `X-Forwarded-For` entry, which the one trusted proxy in front wrote (earlier entries are the caller's word).
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string | undefined {
  const forwarded = req.headers['x-forwarded-for'];
  if (trustProxy && typeof forwarded === 'string') {
    const last = forwarded.split(',').at(-1)?.trim();
    if (last !== undefined && last !== '') return last;
  }
  return req.socket.remoteAddress;
}
