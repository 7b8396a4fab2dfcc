import { AsyncLocalStorage } from 'node:async_hooks';
import type { LoggerService } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Level, Logger } from 'pino';
import { plainLineOf, requestLineOf, type PlainLine } from './logging.js';

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
  private readonly plainLine: PlainLine;

  constructor(readonly root: Logger) {
    this.plainLine = plainLineOf(root);
  }

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

  /**
   * `{ req, context, ...fields, msg }` at `level`, the line `new Logger(context)[level](fields, message)`
   * writes, without Nest's `Logger` and the merged object in between (a binding rejection's warning).
   */
  line(level: Level, context: string, fields: object, message: string): void {
    const scope = scopes.getStore();
    const logger = scope === undefined ? this.root : scope.root;
    if (!logger.isLevelEnabled(level)) return;
    // Any object's own fields read as unknown values; the builder decides each by its type.
    const values = fields as Readonly<Record<string, unknown>>;
    if (logger === this.root && this.plainLine(level, values, message, { request: scope?.request, context })) return;
    logger[level]({ ...(scope === undefined ? {} : { req: scope.request }), context, ...fields }, message);
  }

  private write(level: Level, message: unknown, params: unknown[]): void {
    const scope = scopes.getStore();
    const logger = scope === undefined ? this.root : scope.root;
    const plainLine = logger === this.root ? this.plainLine : undefined;
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
    } else if (level === 'error' && isStack(rest)) {
      // Nest's own exception handlers call error(message, stack, context).
      const err = new Error(String(message));
      err.stack = rest[0];
      fields.err = err;
      logger.error(fields);
      return;
    } else {
      if (rest.length === 0 && plainLine?.(level, fields, String(message)) === true) return;
      logger[level](fields, String(message), ...rest);
      return;
    }
    // One string after the fields is the message; more are its format arguments, which only pino applies.
    if (rest.length <= 1 && (rest[0] === undefined || typeof rest[0] === 'string')) {
      if (plainLine?.(level, fields, rest[0]) === true) return;
    }
    logger[level](fields, ...(rest as [string?]));
  }
}

function isStack(params: unknown[]): params is [string] {
  return params.length === 1 && typeof params[0] === 'string' && /\n\s*at /.test(params[0]);
}

/**
 * One line per request from Fastify's own hooks (no middleware bridge): the request's scope is entered on
 * arrival (Fastify carries it across body parsing itself, through an AsyncResource per request), and the
 * line is written when the response is sent, at `error` for a 5xx.
 */
export function logRequests(instance: FastifyInstance, logger: AppLogger): void {
  const root = logger.root;
  const line = requestLineOf(root);
  instance
    .addHook('onRequest', (request, _reply, done) => {
      scopes.run({ root, request }, done);
    })
    .addHook('onResponse', (request, reply: FastifyReply, done) => {
      const level = reply.statusCode >= 500 ? 'error' : 'info';
      if (root.isLevelEnabled(level)) {
        line(
          level,
          request,
          reply.statusCode,
          reply.elapsedTime,
          level === 'error' ? 'request errored' : 'request completed',
        );
      }
      done();
    })
    .addHook('onRequestAbort', (request, done) => {
      if (root.isLevelEnabled('info')) root.info({ req: request }, 'request aborted');
      done();
    });
}
