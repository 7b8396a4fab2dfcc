import { QueryFailedError } from 'typeorm';

/** SQLSTATE classes and codes that mean "the server cannot be used right now", not "this request is wrong". */
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[1-3]|53300|57014)$/;
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH']);
// node-postgres reports a lost or refused connection by message only; TypeORM, a connection lost in the
// middle of a transaction (its query runner released under it, also at COMMIT), by its *AlreadyReleased errors.
const UNAVAILABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended unexpectedly|Client was closed|query runner was already released|Query runner already released/;

/**
 * True when `error` means PostgreSQL is unreachable, restarting or refusing work for now (including a
 * statement cancelled by `statement_timeout`): the caller answers 503 with `Retry-After`, never 500.
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 4) return false;
  const { code, message, cause, errors } = error as {
    code?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
  };
  if (typeof code === 'string' && (UNAVAILABLE_SQLSTATE.test(code) || NETWORK_CODES.has(code))) return true;
  if (typeof message === 'string' && UNAVAILABLE_MESSAGE.test(message)) return true;
  const inner = [error instanceof QueryFailedError ? error.driverError : undefined, cause];
  if (Array.isArray(errors)) inner.push(...(errors as unknown[]));
  return inner.some((e) => e !== error && isDatabaseUnavailable(e, depth + 1));
}

/** Quoted literals in a PostgreSQL message ('invalid input syntax for type uuid: "…"') may be caller data. */
const QUOTED = /"(?:[^"\\]|\\.)*"/g;

/** A PostgreSQL error message fit for a log line: its quoted values replaced by "…". */
export function scrubSqlMessage(message: string): string {
  return message.replace(QUOTED, '"…"');
}
