import { Logger, type INestApplication } from '@nestjs/common';
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
    if (error instanceof SettingsError) {
      process.stderr.write(`${name}: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  start(settings)
    .then(({ app, cleanup }) => {
      // Here, once per process, whichever way it was started (npm start, compose, by hand).
      if (settings.devMode) new Logger(name).warn({ devMode: true, dataDir: settings.dataDir }, DEV_MODE_WARNING);
      let stopping = false;
      const stop = (signal: NodeJS.Signals): void => {
        if (stopping) {
          // A second signal means "now": nothing waits for the first shutdown to finish.
          process.stderr.write(`${name}: ${signal} again, exiting without waiting\n`);
          process.exit(1);
        }
        stopping = true;
        // However shutdown goes, the process ends: a request stuck in the database cannot hold it open.
        setTimeout(() => {
          process.stderr.write(`${name}: shutdown took longer than ${settings.shutdownTimeoutMs} ms, exiting\n`);
          process.exit(1);
        }, settings.shutdownTimeoutMs).unref();
        app
          .close()
          .then(() => cleanup?.())
          .then(
            () => process.exit(0),
            (error: unknown) => {
              process.stderr.write(`${name}: error during shutdown: ${(error as Error).message}\n`);
              process.exit(1);
            },
          );
      };
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
    })
    .catch((error: unknown) => {
      process.stderr.write(`${name}: failed to start: ${(error as Error).message}\n`);
      process.exit(1);
    });
}
