import type { IncomingMessage } from 'node:http';
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { holdsLines, stdoutDestination, writeHeldLines } from './log-destination.js';
import { clientAddress } from './request-identity.js';
import { safeError } from './safe-error.js';
import type { LogLevel } from './settings.js';

/**
 * Paths pino replaces with "[redacted]" in every log line: no line ever contains a token or a secret. A
 * request is logged only through the `req` serializer, which keeps id, method, path and address (never
 * headers or the query), so no `req.*` path is needed here (each costs every line a clone and a walk).
 */
export const REDACTED_PATHS = [
  'authorization',
  'token',
  'jwt',
  'params.jwt',
  // The issuer's secrets and answers, should a log call ever be handed them (DESIGN 10).
  'client_secret',
  'clientSecret',
  'access_token',
];

/** The fields a logged request keeps; anything else handed to a line as `req` keeps only these too. */
function loggedRequest(value: unknown, trustProxy: boolean): Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return {};
  const req = value as { id?: unknown; method?: unknown; url?: unknown; raw?: unknown };
  const raw = req.raw as IncomingMessage | undefined;
  return {
    id: req.id,
    method: req.method,
    // Query strings stay out of logs: they may carry ids operators consider private.
    url: typeof req.url === 'string' ? req.url.split('?')[0] : undefined,
    remoteAddress: raw?.socket === undefined || raw.headers === undefined ? undefined : clientAddress(raw, trustProxy),
  };
}

/** pino's number for `warn`: lines at it and above are written before the request's answer (DESIGN 9). */
const WRITTEN_AT_ONCE = 40;

/**
 * The process's root pino logger: JSON lines, secrets redacted, the safe error serializer, on stdout unless
 * `stream` is given (tests read their lines).
 */
export function createRootLogger(level: LogLevel, trustProxy: boolean, stream?: DestinationStream): Logger {
  const destination = stream ?? stdoutDestination();
  const options: LoggerOptions = {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: { err: safeError, req: (req: unknown) => loggedRequest(req, trustProxy) },
    ...(holdsLines(destination)
      ? {
          hooks: {
            // A child's lines come through here too: the hook is the root's, inherited.
            logMethod(args, method, value) {
              method.apply(this, args);
              if (value >= WRITTEN_AT_ONCE) writeHeldLines(destination);
            },
          },
        }
      : {}),
  };
  return pino(options, destination);
}
