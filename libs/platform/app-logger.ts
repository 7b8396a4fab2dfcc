import type { LoggerService } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Level, Logger } from 'pino';
import { currentScope, enterRequest, leaveRequest } from './request-scope.js';

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

  /** `{ req, context, ...fields, msg }` at `level`: the line `new Logger(context)[level](fields, message)` writes. */
  line(level: Level, context: string, fields: object, message: string): void {
    const scope = currentScope();
    const logger = scope?.root ?? this.root;
    if (!logger.isLevelEnabled(level)) return;
    const req = scope?.request;
    logger[level]({ ...(req === undefined ? {} : { req }), context, ...fields }, message);
  }

  private write(level: Level, message: unknown, params: unknown[]): void {
    const scope = currentScope();
    // A request's lines go to its own app; others to the app this logger belongs to.
    const logger = scope?.root ?? this.root;
    if (!logger.isLevelEnabled(level)) return;
    // `req` (id, method, path, address) in the line, not in a child logger: most requests log one line, and
    // a child's bindings would be serialised and redacted a second time.
    const fields: Record<string, unknown> = scope?.request === undefined ? {} : { req: scope.request };
    // Nest's Logger appends its context as the last parameter; what comes before it is the message's arguments.
    if (params.length > 0) fields.context = params.at(-1);
    const rest = params.slice(0, -1);
    if (message instanceof Error) {
      fields.err = message;
    } else if (typeof message === 'object' && message !== null) {
      Object.assign(fields, message);
    } else if (level === 'error' && isStack(rest)) {
      // Nest's own exception handlers call error(message, stack, context).
      const err = new Error(String(message));
      err.stack = rest[0];
      fields.err = err;
      logger.error(fields);
      return;
    } else {
      logger[level](fields, String(message), ...rest);
      return;
    }
    // One string after the fields is the message; more are its format arguments, which pino applies.
    logger[level](fields, ...(rest as [string?]));
  }
}

function isStack(params: unknown[]): params is [string] {
  return params.length === 1 && typeof params[0] === 'string' && /\n\s*at /.test(params[0]);
}

/** Fields for a request's own line, given while it is answered (why a 503 was sent). */
const lineFields = new WeakMap<FastifyRequest, Readonly<Record<string, unknown>>>();

/** Adds `fields` to `request`'s line (written once it is answered). */
export function addToRequestLine(request: FastifyRequest, fields: Readonly<Record<string, unknown>>): void {
  lineFields.set(request, { ...lineFields.get(request), ...fields });
}

type RequestLineLevel = 'info' | 'warn' | 'error';

const MESSAGES: Readonly<Record<RequestLineLevel, string>> = {
  info: 'request completed',
  warn: 'request unavailable',
  error: 'request errored',
};

/**
 * `error` for a 5xx, except a 503 with `Retry-After` (the database is away, the process is closing, a limit
 * is reached): expected, and a warning an operator can alert on apart from real faults.
 */
function requestLineLevel(reply: FastifyReply): RequestLineLevel {
  if (reply.statusCode < 500) return 'info';
  return reply.statusCode === 503 && reply.hasHeader('retry-after') ? 'warn' : 'error';
}

/**
 * One line per request from Fastify's own hooks (no middleware bridge): the request's scope is entered on
 * arrival (Fastify carries it across body parsing itself, through an AsyncResource per request) and left when
 * it is answered, and the line is written then.
 */
export function logRequests(instance: FastifyInstance, logger: AppLogger): void {
  const root = logger.root;
  instance
    .addHook('onRequest', (request, _reply, done) => {
      enterRequest(root, request, done);
    })
    .addHook('onResponse', (request, reply, done) => {
      leaveRequest(request);
      const level = requestLineLevel(reply);
      if (root.isLevelEnabled(level)) {
        const res = { statusCode: reply.statusCode };
        root[level](
          { req: request, res, responseTime: reply.elapsedTime, ...lineFields.get(request) },
          MESSAGES[level],
        );
      }
      done();
    })
    .addHook('onRequestAbort', (request, done) => {
      leaveRequest(request);
      if (root.isLevelEnabled('info')) root.info({ req: request }, 'request aborted');
      done();
    });
}
