import { Catch, HttpException, HttpStatus, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { addToRequestLine } from './app-logger.js';
import { isDatabaseUnavailable } from './database-errors.js';

export interface FieldError {
  readonly field: string;
  readonly message: string;
}

/** RFC 9457 body. */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly errors?: readonly FieldError[];
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

const TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  428: 'Precondition Required',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
};

export function titleFor(status: number): string {
  return TITLES[status] ?? (status >= 500 ? 'Server Error' : 'Error');
}

/** An error that renders as problem+json with the given status, detail and headers. */
export interface ProblemExtras {
  readonly errors?: readonly FieldError[];
  readonly headers?: Readonly<Record<string, string>>;
  readonly type?: string;
}

/**
 * Stack depth for an exception of `status`: 4xx answers are expected control flow and never logged, and
 * capturing their stacks was the largest cost of a rejected request (bench/ reject); 5xx keep theirs.
 */
const stackLimitFor = (status: number): number => (status >= 500 ? Error.stackTraceLimit : 0);

export class ProblemException extends HttpException {
  readonly extras: ProblemExtras;

  constructor(status: number, detail: string, extras: ProblemExtras = {}) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = stackLimitFor(status);
    super(detail, status);
    Error.stackTraceLimit = limit;
    this.extras = extras;
  }
}

/** An error answered as `text/plain` (the config server's binding rejection, DESIGN 6.2). */
export class PlainTextException extends HttpException {
  readonly text: string;

  constructor(status: number, text: string) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = stackLimitFor(status);
    super(text, status);
    Error.stackTraceLimit = limit;
    this.text = text;
  }
}

/**
 * An error whose body a standard other than RFC 9457 fixes (the token endpoint's RFC 6749 5.2 errors):
 * rendered as `application/json` exactly as given, with its headers.
 */
export class JsonErrorException extends HttpException {
  constructor(
    status: number,
    readonly body: Readonly<Record<string, string>>,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = stackLimitFor(status);
    super(body.error ?? 'error', status);
    Error.stackTraceLimit = limit;
  }
}

export const badRequest = (detail: string, errors?: readonly FieldError[]): ProblemException =>
  new ProblemException(HttpStatus.BAD_REQUEST, detail, errors ? { errors } : {});
export const notFound = (detail: string): ProblemException => new ProblemException(HttpStatus.NOT_FOUND, detail);
export const conflict = (detail: string): ProblemException => new ProblemException(HttpStatus.CONFLICT, detail);
export const forbidden = (detail: string): ProblemException => new ProblemException(HttpStatus.FORBIDDEN, detail);
export const preconditionFailed = (detail: string): ProblemException =>
  new ProblemException(HttpStatus.PRECONDITION_FAILED, detail);

interface Rendered {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  /** A problem's `detail`, kept for a route that answers RFC 6749 errors instead. */
  readonly detail?: string;
}

export function problemBody(
  status: number,
  detail: string,
  errors?: readonly FieldError[],
  type = 'about:blank',
): string {
  const problem: Problem = { type, title: titleFor(status), status, detail, ...(errors ? { errors } : {}) };
  return JSON.stringify(problem);
}

/** Fastify's own errors (body parsing, size limits) carry `statusCode` and a `code` such as FST_ERR_*. */
interface FastifyLikeError {
  statusCode?: number;
  code?: string;
  message?: string;
}

function isFastifyError(error: unknown): error is FastifyLikeError {
  return (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as FastifyLikeError).statusCode === 'number' &&
    typeof (error as FastifyLikeError).code === 'string'
  );
}

/** Fastify's 4xx errors whose message is fixed text; others (a bad URL) quote the request, so get their own. */
const FASTIFY_DETAILS: Readonly<Record<string, string>> = {
  FST_ERR_BAD_URL: 'Malformed percent-encoding in the request path',
  FST_ERR_CTP_BODY_TOO_LARGE: 'Request body is too large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Unsupported Media Type',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Request body size did not match Content-Length',
  FST_ERR_CTP_EMPTY_JSON_BODY: "Body cannot be empty when content-type is set to 'application/json'",
  FST_ERR_CTP_INVALID_JSON_BODY: "Body is not valid JSON but content-type is set to 'application/json'",
};

/** Nest's answer for a path without a route, `Cannot GET /path?query`: the method and the path only. */
const NO_ROUTE = /^Cannot ([A-Z]+) ([^?#]*)/;

/**
 * DESIGN 3: no error answer echoes the query string or headers. The path of an unknown route is shown when
 * it is printable ASCII of modest length; anything else (raw bytes, a long path) is left out.
 */
function noRouteDetail(message: string): string | undefined {
  const match = NO_ROUTE.exec(message);
  if (match === null) return undefined;
  const [, method = '', path = ''] = match;
  return /^\/[\x21-\x7e]{0,199}$/.test(path) ? `No route for ${method} ${path}` : `No route for ${method} on this path`;
}

/** Seconds a client is asked to wait while the database is unreachable (DESIGN 3). */
export const DATABASE_RETRY_AFTER_SEC = 2;

/** The 503 answered while the database is unreachable or refusing work. */
export const databaseUnavailable = (): ProblemException =>
  new ProblemException(HttpStatus.SERVICE_UNAVAILABLE, 'The database is not reachable; retry shortly', {
    headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SEC) },
  });

/** Maps anything thrown to the wire answer; 5xx never carries internals. */
export function renderError(error: unknown): Rendered {
  if (isDatabaseUnavailable(error)) return renderError(databaseUnavailable());
  if (error instanceof PlainTextException) {
    return { status: error.getStatus(), contentType: 'text/plain; charset=utf-8', body: error.text, headers: {} };
  }
  if (error instanceof JsonErrorException) {
    return {
      status: error.getStatus(),
      contentType: 'application/json; charset=utf-8',
      body: JSON.stringify(error.body),
      headers: { 'cache-control': 'no-store', ...error.headers },
    };
  }
  if (error instanceof ProblemException) {
    const status = error.getStatus();
    return {
      status,
      contentType: PROBLEM_CONTENT_TYPE,
      body: problemBody(status, error.message, error.extras.errors, error.extras.type),
      headers: error.extras.headers ?? {},
      detail: error.message,
    };
  }
  if (error instanceof HttpException) {
    const status = error.getStatus();
    let detail = status >= 500 ? titleFor(status) : error.message;
    if (status === 404) detail = noRouteDetail(error.message) ?? detail;
    return { status, contentType: PROBLEM_CONTENT_TYPE, body: problemBody(status, detail), headers: {}, detail };
  }
  if (isFastifyError(error) && error.statusCode !== undefined && error.statusCode < 500) {
    const status = error.statusCode;
    const detail = FASTIFY_DETAILS[error.code ?? ''] ?? titleFor(status);
    return { status, contentType: PROBLEM_CONTENT_TYPE, body: problemBody(status, detail), headers: {}, detail };
  }
  return {
    status: 500,
    contentType: PROBLEM_CONTENT_TYPE,
    body: problemBody(500, 'Internal Server Error'),
    headers: {},
    detail: 'Internal Server Error',
  };
}

/**
 * Route config (`@RouteConfig(OAUTH_ERRORS)`) of a route whose every error is RFC 6749 5.2's JSON (the token
 * endpoint, DESIGN 3 and 10), those raised before it runs (body format, size, query) included.
 */
export const OAUTH_ERRORS = { oauthErrors: true } as const;

const answersOAuth = (reply: FastifyReply): boolean =>
  (reply.request.routeOptions.config as { oauthErrors?: unknown } | undefined)?.oauthErrors === true;

/**
 * A problem as RFC 6749 5.2 JSON. A body that is not a UTF-8 form is `invalid_request` 400 whatever its type (as
 * a JSON one always was), not 415; the status names any other cause (413 stays 413).
 */
function asOAuthError(rendered: Rendered): Rendered {
  if (rendered.detail === undefined) return rendered;
  const unsupported = rendered.status === 415;
  const status = unsupported ? 400 : rendered.status;
  const error = status === 503 ? 'temporarily_unavailable' : status >= 500 ? 'server_error' : 'invalid_request';
  const description = unsupported ? 'The body must be application/x-www-form-urlencoded in UTF-8' : rendered.detail;
  return {
    status,
    contentType: 'application/json; charset=utf-8',
    body: JSON.stringify({ error, error_description: description }),
    headers: { 'cache-control': 'no-store', ...rendered.headers },
  };
}

export function sendError(reply: FastifyReply, error: unknown): void {
  const rendered = answersOAuth(reply) ? asOAuthError(renderError(error)) : renderError(error);
  if (isDatabaseUnavailable(error)) {
    // Expected while PostgreSQL restarts: the request's own warning line says why, never the statement.
    addToRequestLine(reply.request, { reason: reasonOf(error) });
  } else if (rendered.status >= 500 && !isExpectedUnavailable(rendered)) {
    new Logger('Errors').error({ err: error }, 'unhandled error');
  }
  void reply.status(rendered.status).headers(rendered.headers).type(rendered.contentType).send(rendered.body);
}

/** A 503 with `Retry-After` (readiness while the database is away, a limit reached) is an answer, not a fault. */
const isExpectedUnavailable = (rendered: Rendered): boolean =>
  rendered.status === 503 && rendered.headers['retry-after'] !== undefined;

/** The single HTTP exception filter: every error body is problem+json (DESIGN 3). */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  catch(error: unknown, host: ArgumentsHost): void {
    if (host.getType() !== 'http') throw error;
    sendError(host.switchToHttp().getResponse<FastifyReply>(), error);
  }
}

/** The first line of an error's message, for a log line that must not carry a statement's parameters. */
export function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split('\n')[0] ?? '';
}
