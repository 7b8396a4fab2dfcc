import { CLOSE_POLICY_VIOLATION, JSONRPC_ERRORS, JsonRpcError } from '../jsonrpc/jsonrpc.js';
import { invalidParams } from '../jsonrpc/jsonrpc-validation.pipe.js';

export { CLOSE_POLICY_VIOLATION } from '../jsonrpc/jsonrpc.js';
/** Close code on shutdown (RFC 6455 going away; DESIGN 9). */
export const CLOSE_GOING_AWAY = 1001;
/** Close code when this replica lost its lease: reconnect and register again (RFC 6455 service restart). */
export const CLOSE_SERVICE_RESTART = 1012;

export const NOT_OWNER_MESSAGE = 'runtimeInstanceId was not registered on this connection';

/** Missing or invalid token: -32001, then close 1008 "Unauthorized" (DESIGN 8). */
export const unauthorized = (): JsonRpcError =>
  new JsonRpcError(
    JSONRPC_ERRORS.unauthorized.code,
    JSONRPC_ERRORS.unauthorized.message,
    { status: 401 },
    { code: CLOSE_POLICY_VIOLATION, reason: JSONRPC_ERRORS.unauthorized.message },
  );

/** Authenticated but not allowed, for calls that keep the socket open (lookup host, deregister owner). */
export const forbidden = (sentence: string): JsonRpcError =>
  new JsonRpcError(JSONRPC_ERRORS.forbidden.code, sentence, { status: 403 });

/** Params valid in form that the method cannot accept (a limit, an unknown id): -32602, the socket stays open. */
export const paramRefused = (field: string, message: string): JsonRpcError => invalidParams([{ field, message }]);

/** A server-side condition the client may retry (token keys unreachable, shutting down). */
export const unavailable = (message: string): JsonRpcError =>
  new JsonRpcError(JSONRPC_ERRORS.internalError.code, message, { status: 503 });

/** A refresh token for another sid, host or env: -32003, then close 1008 with the same sentence (DESIGN 8). */
export const refreshMismatch = (claim: string): JsonRpcError => {
  const sentence = `Refresh token ${claim} does not match the socket's token`;
  return new JsonRpcError(
    JSONRPC_ERRORS.forbidden.code,
    sentence,
    { status: 403 },
    { code: CLOSE_POLICY_VIOLATION, reason: sentence },
  );
};
