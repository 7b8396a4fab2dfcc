import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { scrubSqlMessage } from './database-errors.js';
import {
  pino,
  stdSerializers,
  symbols,
  type DestinationStream,
  type Level,
  type Logger,
  type LoggerOptions,
} from 'pino';
import { BlockWriter } from './block-writer.js';
import type { LogLevel } from './settings.js';

/**
 * Paths pino replaces with "[redacted]" in every log line: no line ever contains a token or a secret. A
 * request is logged only through the `req` serializer, which keeps id, method, path and address (never
 * headers or the query), so no `req.*` path is needed here (each costs every line a clone and a walk).
 */
export const REDACTED_PATHS = [
  'authorization',
  'token',
  'jwt',
  'params.jwt',
  // The issuer's secrets and answers, should a log call ever be handed them (DESIGN 10).
  'client_secret',
  'clientSecret',
  'access_token',
];

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Accepts a well-formed incoming `X-Request-Id`, else makes one. */
export function requestId(req: IncomingMessage): string {
  const incoming = req.headers['x-request-id'];
  return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
}

/**
 * pino's error serializer, minus what a failed SQL statement carries that may hold a certificate or a
 * secret: its parameters, the server's `detail` ("Key (x)=(value)"), and quoted values in its message.
 */
export function safeError(err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) {
    // Something threw a non-Error: name its shape (never its values) so the log says what it was.
    if (typeof err !== 'object' || err === null) return { message: String(err), type: typeof err };
    // An error-like object that is not an Error here (TypeORM's errors arrive so): its type and scrubbed message.
    const fields = err as { type?: unknown; message?: unknown; stack?: unknown };
    return {
      type: typeof fields.type === 'string' ? fields.type : err.constructor?.name,
      message: typeof fields.message === 'string' ? scrubSqlMessage(fields.message) : 'a thrown object',
      stack: typeof fields.stack === 'string' ? scrubSqlMessage(fields.stack) : undefined,
      keys: Object.keys(err).slice(0, 10),
    };
  }
  const base = stdSerializers.err(err) as unknown as Record<string, unknown>;
  const sql = 'query' in err || 'driverError' in err || typeof (err as { severity?: unknown }).severity === 'string';
  if (!sql) return base;
  const scrub = (text: unknown): string | undefined => (typeof text === 'string' ? scrubSqlMessage(text) : undefined);
  const fields = err as { code?: unknown; constraint?: unknown; query?: unknown };
  return {
    type: base.type,
    message: scrub(base.message),
    stack: scrub(base.stack),
    code: fields.code,
    constraint: fields.constraint,
    query: fields.query,
  };
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

/** The fields a logged request keeps; anything else handed to a line as `req` keeps only these too. */
function loggedRequest(value: unknown, trustProxy: boolean): Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return {};
  const req = value as { id?: unknown; method?: unknown; url?: unknown; raw?: unknown };
  const raw = req.raw as IncomingMessage | undefined;
  return {
    id: req.id,
    method: req.method,
    // Query strings stay out of logs: they may carry ids operators consider private.
    url: typeof req.url === 'string' ? req.url.split('?')[0] : undefined,
    remoteAddress: raw?.socket === undefined || raw.headers === undefined ? undefined : clientAddress(raw, trustProxy),
  };
}

/** pino's number for `warn`: lines at it and above are written before the request's answer (DESIGN 9). */
const WRITTEN_AT_ONCE = 40;

/** The process's root pino logger: JSON lines, secrets redacted, the safe error serializer. */
export function createRootLogger(level: LogLevel, trustProxy: boolean, stream?: DestinationStream): Logger {
  const destination = stream ?? stdout();
  // Only the block writer holds lines back; a warning must survive a crash right after the answer.
  const flush = destination instanceof BlockWriter ? () => destination.flushSync() : undefined;
  const options: LoggerOptions = {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: { err: safeError, req: (req: unknown) => loggedRequest(req, trustProxy) },
    ...(flush === undefined
      ? {}
      : {
          hooks: {
            logMethod(args, method, value) {
              method.apply(this, args);
              if (value >= WRITTEN_AT_ONCE) flush();
            },
          },
        }),
  };
  const root = pino(options, destination);
  // A stream that wants pino's per-line metadata (multistream) gets every line through pino.
  if (!(symbols.needsMetadataGsym in destination)) ROOTS.set(root, { trustProxy, stream: destination, flush });
  return root;
}

interface FastRoot {
  readonly trustProxy: boolean;
  readonly stream: DestinationStream;
  /** Writes held-back lines now; called after each line at `warn` and above. */
  readonly flush: (() => void) | undefined;
}

/** Root loggers made by createRootLogger, whose lines `requestLineOf` and `plainLineOf` may build. */
const ROOTS = new WeakMap<Logger, FastRoot>();

/** What every line of `root` starts with, up to its time: `{"level":30,"time":` plus its bindings after. */
function lineStart(root: Logger): { readonly levels: Readonly<Record<string, number>>; readonly bindings: string } {
  // pid and hostname, as pino serialised them when it made the root (a root has no child bindings).
  const bindings = (root as unknown as Record<symbol, string | undefined>)[symbols.chindingsSym] ?? '';
  return { levels: root.levels.values, bindings };
}

/** Writes one request line, as `root[level]({ req, res: { statusCode }, responseTime }, message)` would. */
export type RequestLine = (
  level: 'info' | 'error',
  request: unknown,
  statusCode: number,
  responseTime: number,
  message: string,
) => void;

/**
 * The request line (one per request, DESIGN 9) built directly, byte for byte the line pino builds (a
 * differential property test holds them equal): its keys are fixed and none is redacted, and pino's
 * generic path (serializer and stringifier lookups per key, hooks) was most of a line's 6 µs (bench auth).
 * Any other logger gets the pino call.
 */
export function requestLineOf(root: Logger): RequestLine {
  const fast = ROOTS.get(root);
  if (fast === undefined) {
    return (level, request, statusCode, responseTime, message) =>
      root[level]({ req: request, res: { statusCode }, responseTime }, message);
  }
  const { trustProxy, stream, flush } = fast;
  const { levels, bindings } = lineStart(root);
  return (level, request, statusCode, responseTime, message) => {
    const req = JSON.stringify(loggedRequest(request, trustProxy));
    // pino writes a non-finite number as null.
    const time = Number.isFinite(responseTime) ? responseTime : null;
    stream.write(
      `{"level":${levels[level]},"time":${Date.now()}${bindings},"req":${req},` +
        `"res":{"statusCode":${statusCode}},"responseTime":${time},"msg":${JSON.stringify(message)}}\n`,
    );
    if (levels[level] >= WRITTEN_AT_ONCE) flush?.();
  };
}

/**
 * Writes `fields` and `message` as pino would and returns true, or returns false having written nothing.
 * `head`, when given, comes first as `req` and `context`, as if `{ req, context, ...fields }` had been
 * passed, without building that object; `fields` must then hold neither key.
 */
export type PlainLine = (
  level: Level,
  fields: Readonly<Record<string, unknown>>,
  message: string | undefined,
  head?: LineHead,
) => boolean;

/** The request a line is logged within and the logger's context, written before a line's own fields. */
export interface LineHead {
  readonly request: unknown;
  readonly context: string;
}

/**
 * Keys pino treats specially here: the error serializer, the redacted paths' first keys, and those that make
 * it read the fields as a Node request (`method`, `headers` and `socket` together).
 */
const PINO_KEYS = new Set(['err', 'headers', 'socket', ...REDACTED_PATHS.map((path) => path.split('.')[0])]);
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
// Keys come from code, not input: each is tested against PLAIN_KEY once (a bounded set, checked first).
const PLAIN_KEYS = new Set<string>();
const MAX_PLAIN_KEYS = 1024;
const isPlainKey = (key: string): boolean => {
  if (PLAIN_KEYS.has(key)) return true;
  if (PINO_KEYS.has(key) || !PLAIN_KEY.test(key)) return false;
  if (PLAIN_KEYS.size < MAX_PLAIN_KEYS) PLAIN_KEYS.add(key);
  return true;
};

/** A top-level value as pino writes it, or undefined when only pino may write it (or it is left out: null). */
function plainValue(value: unknown): string | undefined | null {
  switch (typeof value) {
    case 'undefined':
      return null;
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return String(value);
    case 'string':
      // pino's own escaping before Node 25 differs from JSON.stringify only for lone surrogates.
      return value.isWellFormed() ? JSON.stringify(value) : undefined;
    default:
      return value === null ? 'null' : undefined;
  }
}

/**
 * Lines of flat fields (strings, numbers, booleans, null, and the request as `req`), built directly, byte
 * for byte as pino builds them (a differential property test holds them equal); anything else, nested
 * objects, errors and redacted keys, is left to pino. A binding rejection's warning line is one (bench reject).
 */
export function plainLineOf(root: Logger): PlainLine {
  const fast = ROOTS.get(root);
  if (fast === undefined) return () => false;
  const { trustProxy, stream, flush } = fast;
  const { levels, bindings } = lineStart(root);
  return (level, fields, message, head) => {
    let line = '';
    if (head !== undefined) {
      if (Object.hasOwn(fields, 'req') || Object.hasOwn(fields, 'context') || !head.context.isWellFormed())
        return false;
      if (head.request !== undefined) line = `,"req":${JSON.stringify(loggedRequest(head.request, trustProxy))}`;
      line += `,"context":${JSON.stringify(head.context)}`;
    }
    for (const key in fields) {
      if (!Object.hasOwn(fields, key)) continue;
      if (!isPlainKey(key)) return false;
      // pino leaves out an undefined field before its serializer sees it.
      const raw = fields[key];
      const value =
        key === 'req' && raw !== undefined ? JSON.stringify(loggedRequest(raw, trustProxy)) : plainValue(raw);
      if (value === undefined) return false;
      if (value !== null) line += `,"${key}":${value}`;
    }
    let msg = '';
    if (message !== undefined) {
      if (!message.isWellFormed()) return false;
      msg = `,"msg":${JSON.stringify(message)}`;
    }
    stream.write(`{"level":${levels[level]},"time":${Date.now()}${bindings}${line}${msg}}\n`);
    if (levels[level] >= WRITTEN_AT_ONCE) flush?.();
    return true;
  };
}

const FLUSH_INTERVAL_MS = 250;
let stdoutStream: BlockWriter | undefined;

/**
 * Stdout for every logger in the process (one writer, so lines never interleave). Lines below `warn` are
 * written in blocks of 16 KiB, and at least every 250 ms and at exit: one system call per line was half the
 * cost of a request's line, and a write to a file costs about 20 µs whatever its size (bench reject). A line
 * at `warn` and above (a binding rejection's) is written with what is pending before its call returns.
 */
function stdout(): BlockWriter {
  if (stdoutStream !== undefined) return stdoutStream;
  const stream = new BlockWriter(1);
  setInterval(() => stream.flushSync(), FLUSH_INTERVAL_MS).unref();
  process.once('exit', () => stream.flushSync());
  stdoutStream = stream;
  return stream;
}
