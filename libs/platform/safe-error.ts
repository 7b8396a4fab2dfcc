import { stdSerializers } from 'pino';
import { scrubSqlMessage } from './database-errors.js';

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
