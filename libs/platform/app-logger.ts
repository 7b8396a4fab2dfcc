import { AsyncLocalStorage } from 'node:async_hooks';
import type { LoggerService } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { symbols, type Level, type Logger } from 'pino';
import { REDACTED_PATHS } from './logging.js';

/** The request a line is logged for, and the app (its root logger) that serves it. */
interface RequestScope {
  readonly root: Logger;
  readonly request: FastifyRequest;
}

// One store for the process: Nest's `Logger` is process-wide, and a line finds its request (and app) here.
const scopes = new AsyncLocalStorage<RequestScope>();

/**
 * Nest's logger, writing pino JSON lines: `new Logger('Context').warn({ fields }, 'message')` becomes
 * `{"context":"Context", ...fields, "msg":"message"}`, with the request's fields when called within one.
 */
export class AppLogger implements LoggerService {
  constructor(readonly root: Logger) {}

  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: Level, message: unknown, params: unknown[]): void {
    const scope = scopes.getStore();
    const logger = scope === undefined ? this.root : scope.root;
    if (!logger.isLevelEnabled(level)) return;
    // `req` (id, method, path, address) in the line, not in a child logger: most requests log one line, and
    // a child's bindings would be serialised and redacted a second time.
    const fields: Record<string, unknown> = scope === undefined ? {} : { req: scope.request };
    // Nest's Logger appends its context as the last parameter; what comes before it is the message's arguments.
    if (params.length > 0) fields.context = params.at(-1);
    const rest = params.slice(0, -1);
    if (message instanceof Error) {
      fields.err = message;
    } else if (typeof message === 'object' && message !== null) {
      Object.assign(fields, message);
      const text = rest[0];
      if (
        rest.length <= 1 &&
        (text === undefined || typeof text === 'string') &&
        directOf(logger)(level, fields, text)
      ) {
        return;
      }
    } else if (level === 'error' && isStack(rest)) {
      // Nest's own exception handlers call error(message, stack, context).
      const err = new Error(String(message));
      err.stack = rest[0];
      fields.err = err;
      logger.error(fields);
      return;
    } else {
      if (rest.length === 0 && directOf(logger)(level, fields, String(message))) return;
      logger[level](fields, String(message), ...rest);
      return;
    }
    logger[level](fields, ...(rest as [string?]));
  }
}

const DIRECT = new WeakMap<Logger, DirectLine>();

/** The direct writer of `root`, made once per logger. */
function directOf(root: Logger): DirectLine {
  let direct = DIRECT.get(root);
  if (direct === undefined) {
    direct = directLines(root);
    DIRECT.set(root, direct);
  }
  return direct;
}

function isStack(params: unknown[]): params is [string] {
  return params.length === 1 && typeof params[0] === 'string' && /\n\s*at /.test(params[0]);
}

/** Writes one line as pino would; false when the line needs pino's own path (the caller then uses it). */
export type DirectLine = (level: Level, fields: Readonly<Record<string, unknown>>, message?: string) => boolean;

/** Keys pino treats specially here (redacted, or the error serializer): lines with them take pino's path. */
const PINO_ONLY_KEYS = new Set([...REDACTED_PATHS.map((path) => path.split('.')[0]), 'err']);

/** No lone surrogate (ES2024 `isWellFormed`, in Node since 20; TypeScript's lib here predates it). */
const wellFormed = (text: string): boolean => (text as unknown as { isWellFormed(): boolean }).isWellFormed();

/** Plain data JSON.stringify writes as pino's `stringify` does: primitives and plain objects of them. */
function plainData(value: object): boolean {
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  return Object.values(value).every((item) => SCALARS.has(typeof item) || item === null);
}
const SCALARS = new Set(['string', 'number', 'boolean', 'undefined']);

/**
 * pino's line for `fields` and `message`, byte for byte, composed here and handed to the logger's stream:
 * pino's generic path (serializers, redaction, a key walk with its own escaping) was the largest cost a
 * read paid that the smallest Nest app does not (bench auth), and half a binding rejection's warning line
 * (bench reject). It takes only what it can write exactly (strings without lone surrogates, finite numbers,
 * booleans, null, plain objects of those, `req` through the logger's serializer) and answers false for the
 * rest. `test/ops/request-line.spec` compares the two outputs over generated lines.
 */
export function directLines(root: Logger): DirectLine {
  const internals = root as unknown as Record<symbol, unknown>;
  const serializeRequest = (internals[symbols.serializersSym] as { req?: (req: unknown) => unknown }).req;
  const stream = internals[symbols.streamSym] as { write?: (line: string) => void } | undefined;
  const bindings = internals[symbols.chindingsSym];
  const levels = root.levels.values;
  if (serializeRequest === undefined || typeof stream?.write !== 'function' || typeof bindings !== 'string') {
    return () => false;
  }
  const write = stream.write.bind(stream);
  return (level, fields, message) => {
    if (message !== undefined && !wellFormed(message)) return false;
    let line = `{"level":${levels[level]},"time":${Date.now()}${bindings}`;
    for (const key in fields) {
      if (!Object.hasOwn(fields, key)) continue;
      const value = fields[key];
      if (value === undefined || typeof value === 'function') continue;
      if (PINO_ONLY_KEYS.has(key) || !wellFormed(key)) return false;
      let json: string;
      if (key === 'req') json = JSON.stringify(serializeRequest(value));
      else if (typeof value === 'string') {
        if (!wellFormed(value)) return false;
        json = JSON.stringify(value);
      } else if (typeof value === 'number') json = Number.isFinite(value) ? String(value) : 'null';
      else if (typeof value === 'boolean') json = String(value);
      else if (typeof value === 'object' && value !== null && plainData(value)) json = JSON.stringify(value);
      else if (value === null) json = 'null';
      else return false;
      line += `,${JSON.stringify(key)}:${json}`;
    }
    write(message === undefined ? `${line}}\n` : `${line},"msg":${JSON.stringify(message)}}\n`);
    return true;
  };
}

/**
 * One line per request from Fastify's own hooks (no middleware bridge): the request's scope is entered on
 * arrival (Fastify carries it across body parsing itself, through an AsyncResource per request), and the
 * line is written when the response is sent, at `error` for a 5xx.
 */
export function logRequests(instance: FastifyInstance, logger: AppLogger): void {
  const root = logger.root;
  const direct = directOf(root);
  const completed = (request: FastifyRequest, statusCode: number, responseTime: number): void => {
    const fields = { req: request, res: { statusCode }, responseTime };
    if (!direct('info', fields, 'request completed')) root.info(fields, 'request completed');
  };
  instance
    .addHook('onRequest', (request, _reply, done) => {
      scopes.run({ root, request }, done);
    })
    .addHook('onResponse', (request, reply: FastifyReply, done) => {
      if (reply.statusCode >= 500) {
        if (root.isLevelEnabled('error')) {
          root.error(
            { req: request, res: { statusCode: reply.statusCode }, responseTime: reply.elapsedTime },
            'request errored',
          );
        }
      } else if (root.isLevelEnabled('info')) completed(request, reply.statusCode, reply.elapsedTime);
      done();
    })
    .addHook('onRequestAbort', (request, done) => {
      if (root.isLevelEnabled('info')) root.info({ req: request }, 'request aborted');
      done();
    });
}
