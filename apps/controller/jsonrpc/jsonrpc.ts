/**
 * JSON-RPC 2.0 framing (https://www.jsonrpc.org/specification): parsing a text frame into a request,
 * the error codes the controller answers, and the response envelopes. Pure: no sockets here.
 */

export type JsonRpcId = string | number | null;

/** Close code after a rejected token or binding (RFC 6455 policy violation; DESIGN 8). */
export const CLOSE_POLICY_VIOLATION = 1008;

/**
 * The handler name a gateway may subscribe to receive every method it has no handler for, so its guards
 * decide first (DESIGN 8: on a socket without a verified token an unknown method is -32001 too). The
 * `rpc.` prefix is reserved by JSON-RPC for such internal names; without that handler the adapter answers
 * -32601 itself.
 */
export const UNKNOWN_METHOD = 'rpc.unknown';

/**
 * The handler name a gateway may subscribe to pass judgement on a frame that is not a valid request (bad
 * JSON, a binary frame...) before its error is answered: behind its guards, so a socket without a verified
 * token is closed 1008 for any frame (DESIGN 8). It returns nothing; the adapter sends the frame's error.
 */
export const INVALID_FRAME = 'rpc.invalid';

/** Names JSON-RPC reserves for internal use: a client naming one calls an unknown method. */
export const isReservedMethod = (method: string): boolean => method.startsWith('rpc.');

export const JSONRPC_ERRORS = {
  parseError: { code: -32700, message: 'Parse error' },
  invalidRequest: { code: -32600, message: 'Invalid Request' },
  methodNotFound: { code: -32601, message: 'Method not found' },
  invalidParams: { code: -32602, message: 'Invalid params' },
  internalError: { code: -32603, message: 'Internal error' },
  /** Decided here (DESIGN 8): the token is missing or invalid. */
  unauthorized: { code: -32001, message: 'Unauthorized' },
  /** Decided here (DESIGN 8): authenticated but not allowed (binding mismatch, not the owner). */
  forbidden: { code: -32003, message: 'Forbidden' },
  /** Decided here: the database is unreachable for now; `data` carries status 503 and `retryAfterSec`. */
  unavailable: { code: -32004, message: 'Service Unavailable' },
} as const;

export interface JsonRpcErrorObject {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

export interface JsonRpcRequest {
  readonly jsonrpc: '2.0';
  readonly method: string;
  /** An omitted `params` is `{}`; by-position (array) params are refused by the dispatcher. */
  readonly params: Readonly<Record<string, unknown>> | readonly unknown[];
  /** Absent for a notification, which is never answered. */
  readonly id?: JsonRpcId;
}

export interface JsonRpcSuccess {
  readonly jsonrpc: '2.0';
  readonly id: JsonRpcId;
  readonly result: unknown;
}

export interface JsonRpcFailure {
  readonly jsonrpc: '2.0';
  readonly id: JsonRpcId;
  readonly error: JsonRpcErrorObject;
}

export type JsonRpcResponse = JsonRpcSuccess | JsonRpcFailure;

/** A WebSocket close the server performs after answering (DESIGN 8: 1008 after a rejection). */
export interface CloseAfterReply {
  readonly code: number;
  readonly reason: string;
}

/** Thrown by handlers; the adapter turns it into the `error` member and, if asked, closes the socket. */
export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
    readonly closeAfterReply?: CloseAfterReply,
  ) {
    super(message);
    this.name = 'JsonRpcError';
  }

  toObject(): JsonRpcErrorObject {
    return { code: this.code, message: this.message, ...(this.data === undefined ? {} : { data: this.data }) };
  }
}

export const success = (id: JsonRpcId, result: unknown): JsonRpcSuccess => ({ jsonrpc: '2.0', id, result });

export const failure = (id: JsonRpcId, error: JsonRpcErrorObject): JsonRpcFailure => ({ jsonrpc: '2.0', id, error });

export type ParsedFrame =
  | { readonly ok: true; readonly request: JsonRpcRequest; readonly notification: boolean }
  /**
   * `reply` is sent unless `notification`: a JSON object without an `id` member is a notification whatever
   * else it holds, so it is never answered (DESIGN 8); anything else that is not a request has no id to
   * tell, and is answered with `id` null as JSON-RPC 2.0 asks.
   */
  | { readonly ok: false; readonly reply: JsonRpcFailure; readonly notification: boolean };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isId = (value: unknown): value is JsonRpcId =>
  value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));

function invalidRequest(id: JsonRpcId, detail: string, notification = false): ParsedFrame {
  return { ok: false, reply: failure(id, { ...JSONRPC_ERRORS.invalidRequest, data: { detail } }), notification };
}

/** Parses one text frame into a single request; batches are refused (decided here, docs/controller.md). */
export function parseFrame(text: string): ParsedFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reply: failure(null, JSONRPC_ERRORS.parseError), notification: false };
  }
  if (Array.isArray(value)) return invalidRequest(null, 'batch requests are not supported');
  if (!isObject(value)) return invalidRequest(null, 'a request must be a JSON object');
  const hasId = Object.hasOwn(value, 'id');
  const id = hasId && isId(value.id) ? value.id : null;
  if (hasId && !isId(value.id)) return invalidRequest(null, 'id must be a string, a number or null');
  if (value.jsonrpc !== '2.0') return invalidRequest(id, 'jsonrpc must be "2.0"', !hasId);
  if (typeof value.method !== 'string' || value.method === '') {
    return invalidRequest(id, 'method must be a non-empty string', !hasId);
  }
  const params = value.params === undefined ? {} : value.params;
  if (!isObject(params) && !Array.isArray(params)) {
    return invalidRequest(id, 'params must be an object or an array', !hasId);
  }
  const request: JsonRpcRequest = { jsonrpc: '2.0', method: value.method, params, ...(hasId ? { id } : {}) };
  return { ok: true, request, notification: !hasId };
}

/**
 * A binary frame is never served (text frames only): -32600, with the id of the request it carries when it
 * carries one, and no answer when it carries a notification (decided here, docs/decisions.md).
 */
export function parseBinaryFrame(text: string): ParsedFrame {
  const parsed = parseFrame(text);
  const id = parsed.ok ? (parsed.request.id ?? null) : parsed.reply.id;
  return invalidRequest(id, 'only text frames are accepted', parsed.notification);
}
