import { AsyncLocalStorage } from 'node:async_hooks';
import type { LoggerService } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { symbols, type Level, type Logger } from 'pino';

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
    logger[level](fields, ...(rest as [string?]));
  }
}

function isStack(params: unknown[]): params is [string] {
  return params.length === 1 && typeof params[0] === 'string' && /\n\s*at /.test(params[0]);
}

/**
 * The `request completed` line, byte for byte what `root.info({ req, res, responseTime }, msg)` writes,
 * composed here and handed to the logger's stream: pino's generic path (serializers, redaction, key walk)
 * was the largest cost a read paid that the smallest Nest app does not (bench auth). Redaction has nothing
 * to do here: the `req` serializer keeps only id, method, path and address. `app-logger.spec` compares the
 * two outputs.
 */
export function requestLineWriter(root: Logger): (request: FastifyRequest, statusCode: number, ms: number) => void {
  const internals = root as unknown as Record<symbol, unknown>;
  const serializeRequest = (internals[symbols.serializersSym] as { req?: (req: unknown) => unknown }).req;
  const stream = internals[symbols.streamSym] as { write(line: string): void };
  const bindings = internals[symbols.chindingsSym] as string;
  const level = root.levels.values.info;
  if (serializeRequest === undefined || typeof stream?.write !== 'function' || typeof bindings !== 'string') {
    // Not the logger createRootLogger builds: pino's own path, same line.
    return (request, statusCode, responseTime) =>
      root.info({ req: request, res: { statusCode }, responseTime }, 'request completed');
  }
  return (request, statusCode, responseTime) => {
    stream.write(
      `{"level":${level},"time":${Date.now()}${bindings},"req":${JSON.stringify(serializeRequest(request))},` +
        `"res":{"statusCode":${statusCode}},"responseTime":${responseTime},"msg":"request completed"}\n`,
    );
  };
}

/**
 * One line per request from Fastify's own hooks (no middleware bridge): the request's scope is entered on
 * arrival (Fastify carries it across body parsing itself, through an AsyncResource per request), and the
 * line is written when the response is sent, at `error` for a 5xx.
 */
export function logRequests(instance: FastifyInstance, logger: AppLogger): void {
  const root = logger.root;
  const completed = requestLineWriter(root);
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
