import type { AddressInfo } from 'node:net';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { queryObserver } from '#database';
import { createHttpApp, loadSettings, type Settings } from '#platform';
import { ApiModule } from '../../apps/api/api.module.js';
import { apiHttpOptions } from '../../apps/api/openapi.js';
import { recordRoutes, type RouteRecord } from './route-table.js';
import { testKeyRingFile } from './key-ring.js';
import { LogCapture } from './log-lines.js';
import { ISSUER, writeJwksFile } from './tokens.js';

export { LogCapture } from './log-lines.js';

export function testSettings(env: Record<string, string> = {}): Settings {
  // A test that names a server of its own (and no session URL) talks to it directly, not to the suite's pooler.
  const own = env.DATABASE_URL !== undefined && env.DATABASE_SESSION_URL === undefined;
  return loadSettings({
    NODE_ENV: 'test',
    DATABASE_URL: process.env.DATABASE_URL,
    DATABASE_SESSION_URL: own ? '' : process.env.DATABASE_SESSION_URL,
    DATABASE_POOL_MODE: own ? '' : process.env.DATABASE_POOL_MODE,
    JWT_JWKS_FILE: writeJwksFile(),
    JWT_ISSUER: ISSUER,
    CONTROLLER_HOST_ID: 'h-ctl',
    LOG_LEVEL: 'info',
    CONFIG_KEYRING_FILE: testKeyRingFile(),
    ...env,
  });
}

export interface TestApi {
  readonly app: NestFastifyApplication;
  readonly logs: LogCapture;
  /** Every route the app registered (Fastify's own table). */
  readonly routes: readonly RouteRecord[];
  close(): Promise<void>;
}

async function createApi(
  env: Record<string, string>,
): Promise<{ app: NestFastifyApplication; logs: LogCapture; routes: RouteRecord[] }> {
  const settings = testSettings(env);
  const logs = new LogCapture();
  const app = await createHttpApp(
    ApiModule.forRoot({ settings, databaseUrl: settings.databaseUrl ?? '', logStream: logs }),
    apiHttpOptions(settings.trustProxy),
  );
  return { app, logs, routes: recordRoutes(app) };
}

/** The real api module on the test database, served in-process (requests through `app.inject`). */
export async function startApi(env: Record<string, string> = {}): Promise<TestApi> {
  const { app, logs, routes } = await createApi(env);
  try {
    await app.init();
  } catch (error) {
    // A refused start (a check in onModuleInit) leaves the hooks that already ran with timers: stop them.
    await app.close().catch(() => undefined);
    throw error;
  }
  await app.getHttpAdapter().getInstance().ready();
  return { app, logs, routes, close: () => app.close() };
}

export interface ListeningApi extends TestApi {
  /** `http://127.0.0.1:<port>`, for clients outside the process (a browser). */
  readonly url: string;
}

/** The same api listening on 127.0.0.1 with a free port. */
export async function listenApi(env: Record<string, string> = {}): Promise<ListeningApi> {
  const { app, logs, routes } = await createApi(env);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.getHttpServer().address() as AddressInfo;
  return { app, logs, routes, url: `http://127.0.0.1:${port}`, close: () => app.close() };
}

/** Runs `action` and returns how many SQL statements it sent to the database (background timers excluded). */
export async function sqlDuring<T>(action: () => PromiseLike<T>): Promise<{ result: T; queries: number }> {
  const { result, statements } = await queryObserver.during(action);
  return { result, queries: statements.length };
}

/** A short unique suffix so tests sharing one database never collide on names or ids. */
export const unique = (prefix: string): string => `${prefix}-${Math.random().toString(36).slice(2, 10)}`;

export interface CallOptions {
  readonly token?: string;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

/** One HTTP request through the app's real stack (routing, guards, pipes, filters). */
export function call(api: TestApi, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, options: CallOptions = {}) {
  return api.app.inject({
    method,
    url,
    headers: {
      ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
      ...options.headers,
    },
    ...(options.body === undefined ? {} : { payload: options.body as Record<string, unknown> }),
  });
}
