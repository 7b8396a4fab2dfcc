import { connect } from 'node:net';

/**
 * A raw HTTP/1.1 client for the fuzzer: the request goes on the wire byte for byte as given (malformed
 * ones included, which no HTTP library would send), and the answer is parsed here, strictly, so a response
 * that is not valid HTTP is reported rather than smoothed over.
 */

/** Each answer must arrive within this; DESIGN 3's REQUEST_TIMEOUT_MS is far longer, so no wait is legitimate. */
export const ANSWER_MS = 5000;

export interface RawResponse {
  readonly status: number;
  readonly reason: string;
  /** Lower-cased names; repeated fields in order. */
  readonly headers: ReadonlyMap<string, readonly string[]>;
  readonly body: Buffer;
  /** Bytes after the response's end (a HEAD answer that carries a body shows here). */
  readonly trailing: number;
}

export type Outcome =
  | { readonly kind: 'response'; readonly response: RawResponse }
  /** Closed without a single byte of answer. */
  | { readonly kind: 'dropped' }
  | { readonly kind: 'timeout'; readonly received: number }
  /** Bytes arrived but are not a valid HTTP response (or stop in the middle of one). */
  | { readonly kind: 'invalid'; readonly reason: string; readonly received: string };

type Parsed =
  | { readonly state: 'incomplete' }
  | { readonly state: 'invalid'; readonly reason: string }
  | { readonly state: 'complete'; readonly response: RawResponse; readonly streaming: boolean };

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// Field values: visible characters, spaces and tabs, obs-text; never another control character.
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** One field's single value, when it has exactly one. */
export function header(response: RawResponse, name: string): string | undefined {
  const values = response.headers.get(name);
  return values?.length === 1 ? values[0] : values?.join(', ');
}

function decodeChunked(data: Buffer, from: number): { end: number; body: Buffer } | 'incomplete' | { error: string } {
  const parts: Buffer[] = [];
  let at = from;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at, 'latin1');
    if (lineEnd === -1) return 'incomplete';
    const size = /^([0-9A-Fa-f]+)(;.*)?$/.exec(data.toString('latin1', at, lineEnd));
    if (size === null) return { error: `bad chunk size line ${JSON.stringify(data.toString('latin1', at, lineEnd))}` };
    const length = Number.parseInt(size[1] ?? '', 16);
    at = lineEnd + 2;
    if (length === 0) {
      // Trailer section, then an empty line.
      const end = data.indexOf('\r\n\r\n', at - 2, 'latin1');
      if (end === -1) return 'incomplete';
      return { end: end + 4, body: Buffer.concat(parts) };
    }
    if (data.length < at + length + 2) return 'incomplete';
    parts.push(data.subarray(at, at + length));
    if (data.toString('latin1', at + length, at + length + 2) !== '\r\n')
      return { error: 'chunk not followed by CRLF' };
    at += length + 2;
  }
}

/** Parses what arrived so far; `closed`: the peer has closed, so a body delimited by the close is complete. */
export function parseResponse(data: Buffer, head: boolean, closed: boolean): Parsed {
  let start = 0;
  for (;;) {
    const end = data.indexOf('\r\n\r\n', start, 'latin1');
    if (end === -1) {
      return closed
        ? { state: 'invalid', reason: 'the answer ends inside its header section' }
        : { state: 'incomplete' };
    }
    const lines = data.toString('latin1', start, end).split('\r\n');
    const statusLine = /^HTTP\/1\.[01] ([1-5][0-9]{2}) ([\t\x20-\x7e\x80-\xff]*)$/.exec(lines[0] ?? '');
    if (statusLine === null) return { state: 'invalid', reason: `bad status line ${JSON.stringify(lines[0])}` };
    const status = Number(statusLine[1]);
    const headers = new Map<string, string[]>();
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      const name = line.slice(0, colon);
      const value = line.slice(colon + 1).trim();
      if (colon <= 0 || !TOKEN.test(name) || !FIELD_VALUE.test(value)) {
        return { state: 'invalid', reason: `bad header line ${JSON.stringify(line)}` };
      }
      headers.set(name.toLowerCase(), [...(headers.get(name.toLowerCase()) ?? []), value]);
    }
    const bodyStart = end + 4;
    // Interim answers (100 Continue) precede the real one.
    if (status >= 100 && status < 200 && status !== 101) {
      start = bodyStart;
      continue;
    }
    const make = (body: Buffer, bodyEnd: number, streaming = false): Parsed => ({
      state: 'complete',
      streaming,
      response: { status, reason: statusLine[2] ?? '', headers, body, trailing: data.length - bodyEnd },
    });
    const type = headers.get('content-type')?.[0] ?? '';
    // No body by definition; a switched protocol or an event stream never ends on its own.
    if (head || status === 204 || status === 304) return make(Buffer.alloc(0), bodyStart);
    if (status === 101 || (status === 200 && type.startsWith('text/event-stream'))) {
      return make(Buffer.alloc(0), data.length, true);
    }
    const encoding = headers.get('transfer-encoding');
    const lengths = headers.get('content-length');
    if (encoding !== undefined && lengths !== undefined) {
      return { state: 'invalid', reason: 'both Transfer-Encoding and Content-Length' };
    }
    if (encoding !== undefined) {
      if (encoding.join(',').trim().toLowerCase() !== 'chunked') {
        return { state: 'invalid', reason: `unknown Transfer-Encoding ${encoding.join(',')}` };
      }
      const chunked = decodeChunked(data, bodyStart);
      if (chunked === 'incomplete') {
        return closed ? { state: 'invalid', reason: 'the chunked body ends early' } : { state: 'incomplete' };
      }
      if ('error' in chunked) return { state: 'invalid', reason: chunked.error };
      return make(chunked.body, chunked.end);
    }
    if (lengths !== undefined) {
      if (new Set(lengths).size !== 1 || !/^[0-9]+$/.test(lengths[0] ?? '')) {
        return { state: 'invalid', reason: `bad Content-Length ${lengths.join(',')}` };
      }
      const length = Number(lengths[0]);
      if (data.length < bodyStart + length) {
        return closed
          ? { state: 'invalid', reason: 'the body is shorter than its Content-Length' }
          : { state: 'incomplete' };
      }
      return make(data.subarray(bodyStart, bodyStart + length), bodyStart + length);
    }
    // Delimited by the close.
    return closed ? make(data.subarray(bodyStart), data.length) : { state: 'incomplete' };
  }
}

/** Sends `request` on a fresh connection and reads one answer; HEAD answers are read until the close. */
export function exchange(port: number, request: Buffer, head: boolean): Promise<Outcome> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = Buffer.alloc(0);
    let settled = false;
    const finish = (outcome: Outcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => finish({ kind: 'timeout', received: received.length }), ANSWER_MS);
    const judge = (closed: boolean): void => {
      if (received.length === 0) {
        if (closed) finish({ kind: 'dropped' });
        return;
      }
      const parsed = parseResponse(received, head, closed);
      if (parsed.state === 'invalid') {
        finish({ kind: 'invalid', reason: parsed.reason, received: received.toString('latin1', 0, 600) });
      } else if (parsed.state === 'complete' && (closed || !head || parsed.streaming)) {
        finish({ kind: 'response', response: parsed.response });
      }
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      judge(false);
    });
    // A reset after the answer (the server refused a body still arriving) still leaves the answer readable.
    socket.on('error', () => undefined);
    socket.on('close', () => judge(true));
    socket.write(request);
  });
}
