import { Logger, type INestApplication } from '@nestjs/common';
import type { Logger as Pino } from 'pino';
import { AppLogger } from './app-logger.js';
import { createRootLogger } from './logging.js';
import { loadSettings, SettingsError, type Settings } from './settings.js';

/** DESIGN 9: the one start-up line that says a process runs in dev mode (as `docker compose up` does by default). */
export const DEV_MODE_WARNING =
  'dev mode: no key source is configured, so tokens are signed and verified with a generated development key; ' +
  'not for production (set JWT_JWKS_URI, JWT_JWKS_FILE or TOKEN_ISSUER_KEY_FILE)';

export interface Started {
  readonly app: INestApplication;
  /** Releases what the app does not own (an embedded database), after the app has closed. */
  readonly cleanup?: () => Promise<void>;
}

/**
 * Runs a process entry point: settings are validated first (a bad value stops start-up with one line
 * naming the variable); SIGTERM/SIGINT close the app gracefully, then run `cleanup`, then exit 0 — or
 * exit 1 when that takes longer than SHUTDOWN_TIMEOUT_MS or a second signal arrives.
 */
export function runMain(name: string, start: (settings: Settings) => Promise<Started>): void {
  let settings: Settings;
  try {
    settings = loadSettings();
  } catch (error) {
    if (error instanceof SettingsError) exitWith(createRootLogger('info', false), name, error.message);
    throw error;
  }
  const root = createRootLogger(settings.logLevel, settings.trustProxy);
  // Every line from the first is JSON (DESIGN 9): Nest's own lines before the app sets its logger (a failed
  // connect at start, a provider that throws) would otherwise be coloured text with a raw stack.
  Logger.overrideLogger(new AppLogger(root));
  process.on('uncaughtException', (error) => exitWith(root, name, 'uncaught exception', error));
  start(settings)
    .then(({ app, cleanup }) => {
      // Here, once per process, whichever way it was started (npm start, compose, by hand).
      // The issuer is logged too: a dev-mode process started with another API_PORT expects another `iss`.
      if (settings.devMode) {
        new Logger(name).warn(
          { devMode: true, dataDir: settings.dataDir, issuer: settings.jwt.issuer },
          DEV_MODE_WARNING,
        );
      }
      let stopping = false;
      const stop = (signal: NodeJS.Signals): void => {
        if (stopping) {
          // A second signal means "now": nothing waits for the first shutdown to finish.
          exitWith(root, name, `${signal} again, exiting without waiting`);
        }
        stopping = true;
        // However shutdown goes, the process ends: a request stuck in the database cannot hold it open.
        setTimeout(() => {
          exitWith(root, name, `shutdown took longer than ${settings.shutdownTimeoutMs} ms, exiting`);
        }, settings.shutdownTimeoutMs).unref();
        app
          .close()
          .then(() => cleanup?.())
          .then(
            () => process.exit(0),
            (error: unknown) => exitWith(root, name, `error during shutdown: ${(error as Error).message}`, error),
          );
      };
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
    })
    .catch((error: unknown) => exitWith(root, name, `failed to start: ${(error as Error).message}`, error));
}

/** The process's last line, JSON like every other (flushed at exit), then exit 1. */
function exitWith(root: Pino, name: string, message: string, error?: unknown): never {
  root.fatal({ context: name, ...(error === undefined ? {} : { err: error }) }, `${name}: ${message}`);
  process.exit(1);
}
