import type { DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppLogger, logRequests } from './app-logger.js';
import { closeGracefully } from './graceful-close.js';
import { useJsonBodiesOnly } from './json-body.js';
import { requestId } from './request-identity.js';
import { Metrics } from './metrics.js';
import { setupOpenApi } from './openapi.js';
import { SETTINGS } from './platform.module.js';
import {
  badRequest,
  PROBLEM_CONTENT_TYPE,
  problemBody,
  ProblemException,
  ProblemFilter,
  sendError,
  titleFor,
} from './problem.js';
import { GlobalControlCharsGuard, malformedQuery } from './request-input.js';
import type { Settings } from './settings.js';
import { validationPipe } from './validation.js';

export const BODY_LIMIT_BYTES = 1024 * 1024;
/** Longer request targets are 414 (Node's own limit, 16 KiB for the request line and headers, is 431 or 414). */
export const MAX_URL_LENGTH = 8192;

/** A Nest app on Fastify with the shared edge: problem+json errors, strict validation, pino logs. */
export interface HttpAppOptions {
  /** Title and description of the OpenAPI page served at `/docs`. */
  readonly openApi?: { readonly title: string; readonly description: string };
  /** Routes (templates) that accept `application/x-www-form-urlencoded`; every other route is JSON only. */
  readonly formRoutes?: readonly string[];
  /** TRUST_PROXY: `request.ip` is the address the one proxy in front saw (the last X-Forwarded-For hop). */
  readonly trustProxy?: boolean;
  /** Routes (templates) allowed a larger body than BODY_LIMIT_BYTES, with their limit in bytes. */
  readonly bodyLimits?: Readonly<Record<string, number>>;
}

export async function createHttpApp(
  root: DynamicModule,
  options: HttpAppOptions = {},
): Promise<NestFastifyApplication> {
  const bodyLimits = new Map(Object.entries(options.bodyLimits ?? {}));
  const largest = Math.max(BODY_LIMIT_BYTES, ...bodyLimits.values());
  const limitOf = (route: string | undefined): number =>
    (route === undefined ? undefined : bodyLimits.get(route)) ?? BODY_LIMIT_BYTES;
  const adapter = new FastifyAdapter({
    bodyLimit: largest,
    genReqId: requestId,
    // One trusted hop, as `clientAddress` in the logs: the proxy's own X-Forwarded-For entry.
    trustProxy: options.trustProxy === true ? (_address: string, hop: number) => hop < 1 : false,
    // Keep-alive sockets that sit idle are closed on shutdown (after a grace, `closeGracefully`); in-flight
    // requests finish; requests arriving meanwhile get our 503 with Retry-After, not Fastify's bare one.
    forceCloseConnections: 'idle',
    return503OnClosing: false,
    // Errors Fastify raises before routing (bad percent-encoding, bad content type) are problem+json too.
    frameworkErrors: (error: Error, _request: FastifyRequest, reply: FastifyReply) => sendError(reply, error),
    // Node's HTTP parser refuses some requests before Fastify sees them (headers or URI too large).
    clientErrorHandler: answerClientError,
    // Node answers a missing Host with a bare 400 of its own; the onRequest hook answers it as problem+json.
    http: { requireHostHeader: false },
  });
  // Nest's parsers (JSON, form, text) are replaced by the one JSON parser with a depth limit.
  const app = await NestFactory.create<NestFastifyApplication>(root, adapter, { bufferLogs: true, bodyParser: false });
  useJsonBodiesOnly(app.getHttpAdapter().getInstance(), largest, options.formRoutes, limitOf);
  const logger = app.get(AppLogger);
  app.useLogger(logger);
  // Nest routes Fastify's own errors (bad JSON, body too large) through this filter too.
  app.useGlobalFilters(new ProblemFilter());
  app.useGlobalPipes(validationPipe());
  // Control characters in any query or path parameter: checked on every route, after its other guards.
  app.useGlobalGuards(new GlobalControlCharsGuard());
  const metrics = app.get(Metrics);
  limitRequestTime(app.getHttpServer(), app.get<Settings>(SETTINGS).requestTimeoutMs);
  const server: Server = app.getHttpServer();
  // Node closes a connection after an answer with `Connection: close` through destroySoon: linger instead.
  server.on('connection', (socket: Socket) => {
    socket.destroySoon = () => lingeringEnd(socket);
  });
  server.on('connect', (request: IncomingMessage, socket: Duplex) =>
    answerConnect(app.getHttpAdapter().getInstance(), request, socket),
  );
  // First, so that every answer below (414, 413, 405 included) has its log line.
  logRequests(app.getHttpAdapter().getInstance(), logger);
  closeGracefully(server, app.getHttpAdapter().getInstance(), lingeringEnd);
  app
    .getHttpAdapter()
    .getInstance()
    .addHook('onRequest', (request, reply, done) => {
      // Echo the request id so a caller can quote it when reporting a problem.
      void reply.header('x-request-id', request.id);
      if (request.url.length > MAX_URL_LENGTH) {
        sendError(reply, new ProblemException(414, `The request target is longer than ${MAX_URL_LENGTH} characters`));
        return;
      }
      // RFC 9112 3.2: an HTTP/1.1 request without Host is malformed.
      if (request.headers.host === undefined && request.raw.httpVersion === '1.1') {
        sendError(reply, badRequest('The Host header is required'));
        return;
      }
      // Like a malformed path, before routing and authentication (DESIGN 3).
      const malformed = malformedQuery(request.url);
      if (malformed !== undefined) {
        sendError(reply, malformed);
        return;
      }
      // A declared length over the limit is refused before its content type or a byte of it is read (DESIGN 3).
      if (Number(request.headers['content-length'] ?? 0) > limitOf(request.routeOptions.url)) {
        sendError(reply, new ProblemException(413, 'Request body is too large'));
        return;
      }
      // No route for this method: 405 with Allow when the path has routes for other methods (else 404).
      if (request.routeOptions.url === undefined) {
        const allowed = allowedMethods(app.getHttpAdapter().getInstance(), request.url);
        if (allowed.length > 0) {
          void reply.header('allow', allowed.join(', '));
          sendError(
            reply,
            new ProblemException(405, `${request.method} is not allowed here; use ${allowed.join(', ')}`),
          );
          return;
        }
      }
      done();
    })
    .addHook('onResponse', (request, reply, done) => {
      // The route template keeps label cardinality bounded; unmatched paths share one label.
      metrics.observe(
        request.method,
        request.routeOptions.url ?? 'unmatched',
        reply.statusCode,
        reply.elapsedTime / 1000,
      );
      done();
    });
  if (options.openApi !== undefined) setupOpenApi(app, options.openApi.title, options.openApi.description);
  return app;
}

/**
 * REQUEST_TIMEOUT_MS (DESIGN 3): headers and body must have arrived by then, or Node answers 408 through
 * `answerClientError` and closes the connection. Node checks its connections on an interval (30 s by
 * default), so it runs at a quarter of the timeout, at least once a second. Upgraded WebSockets and
 * streaming answers are not requests in progress and are left alone.
 */
function limitRequestTime(server: Server, timeoutMs: number): void {
  server.requestTimeout = timeoutMs;
  server.headersTimeout = timeoutMs;
  // Read by Node when the server starts listening (createHttpApp returns before `listen`).
  Object.assign(server, { connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(timeoutMs / 4))) });
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** The methods that have a route for this concrete URL. */
function allowedMethods(instance: FastifyInstance, url: string): string[] {
  const path = url.split('?')[0] ?? url;
  return METHODS.filter((method) => instance.findRoute({ method, url: path }) !== null);
}

/** The status for a request Node's parser refused: its request line too long is 414, an unknown method 501. */
function clientErrorStatus(error: Error & { code?: string; rawPacket?: unknown }): number {
  const packet = Buffer.isBuffer(error.rawPacket) ? error.rawPacket.toString('latin1') : '';
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW': {
      // The overflow happened inside the request line when the bytes so far hold no complete first line.
      const firstLine = packet.indexOf('\r\n');
      return firstLine === -1 || firstLine > MAX_URL_LENGTH ? 414 : 431;
    }
    case 'HPE_INVALID_METHOD':
      // A well-formed request line with a method nobody implements; anything else is just malformed.
      return /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ \S+ HTTP\/\d\.\d\r\n/.test(packet) ? 501 : 400;
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 408;
    default:
      return 400;
  }
}

/** Answers a request Node's parser refused, as problem+json, then closes the connection. */
function answerClientError(error: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void {
  // Already answered: the errored parser reports each further chunk of the refused request again.
  if (lingering.has(socket)) return;
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const status = clientErrorStatus(error);
  // A HEAD client reads no body (DESIGN 3): bytes after the head would be taken for the next response.
  const head = Buffer.isBuffer(error.rawPacket) && error.rawPacket.subarray(0, 5).toString('latin1') === 'HEAD ';
  endWithProblem(socket, status, titleFor(status), {}, head);
}

/** Writes a whole problem+json response straight on a socket Node no longer parses, then closes it. */
function endWithProblem(
  socket: Duplex,
  status: number,
  detail: string,
  headers: Readonly<Record<string, string>> = {},
  head = false,
): void {
  const body = problemBody(status, detail);
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  lingeringEnd(
    socket,
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\nConnection: close\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
      `${extra}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${head ? '' : body}`,
  );
}

/** How long a closing connection keeps reading, and dropping, what its client still sends. */
const LINGER_MS = 2000;
const lingering = new WeakSet<Duplex>();

/**
 * Lingering close (RFC 9112 9.6): the answer goes out and the write side closes, then whatever the client
 * still sends (the rest of a refused body) is read and dropped until it closes too or LINGER_MS pass.
 * Closing at once with unread input makes the kernel reset the connection, and the reset can discard the
 * answer before the client has read it (the fuzzer saw a 413 lost that way).
 */
export function lingeringEnd(socket: Duplex, data?: string): void {
  if (lingering.has(socket)) return;
  lingering.add(socket);
  socket.end(data);
  const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref();
  socket.once('end', () => socket.destroy());
  socket.once('close', () => clearTimeout(timer));
  // A socket Node no longer parses (CONNECT) is paused: flowing without a listener drops what arrives.
  socket.resume();
}

/**
 * CONNECT never reaches Fastify: Node hands it to a `connect` listener, or destroys the socket without an
 * answer when there is none. Answered like any method a path has no route for (405 with Allow, else 404).
 */
function answerConnect(instance: FastifyInstance, request: IncomingMessage, socket: Duplex): void {
  const allowed = allowedMethods(instance, request.url ?? '/');
  if (allowed.length > 0) {
    endWithProblem(socket, 405, `CONNECT is not allowed here; use ${allowed.join(', ')}`, {
      Allow: allowed.join(', '),
    });
  } else endWithProblem(socket, 404, 'No route for CONNECT');
}
