import type { DataSourceOptions, EntitySchema, MixedList } from 'typeorm';
import { DataSource, MigrationExecutor } from 'typeorm';
import { DatabaseAccess, registerAccess, SLOW_QUERY_MS, type PoolMode } from './access.js';
import { ENTITIES } from './entities/index.js';
import { migrations } from './migrations/index.js';
import { ObservingTypeOrmLogger, type SqlErrorSink } from './query-observer.js';

export interface DatabaseOptions {
  readonly url: string;
  /** DATABASE_SESSION_URL: LISTEN, the lease and migrations; default `url`. */
  readonly sessionUrl?: string;
  /** DATABASE_POOL_MODE, as the operator declares it (DESIGN 15); default `session`. */
  readonly poolMode?: PoolMode;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own entity list type
  readonly entities?: MixedList<Function | string | EntitySchema>;
  readonly poolSize?: number;
  /** `statement_timeout` of every pooled connection (per transaction in transaction mode); 0 or unset: none. */
  readonly statementTimeoutMs?: number;
  readonly applicationName?: string;
  readonly sink?: SqlErrorSink;
}

/**
 * One definition of how every process connects: migrations only, never `synchronize`. The pool is the
 * access layer's (`DatabaseAccess`), handed to TypeORM through its `driver` option.
 */
export function dataSourceOptions(options: DatabaseOptions): DataSourceOptions {
  const logger = new ObservingTypeOrmLogger(options.sink);
  const access = new DatabaseAccess({ ...options, logger });
  registerAccess(access);
  return {
    type: 'postgres',
    driver: access.driver,
    url: options.url,
    entities: options.entities ?? [...ENTITIES],
    migrations,
    migrationsTableName: 'typeorm_migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: ['error', 'warn', 'migration'],
    logger,
    maxQueryExecutionTime: SLOW_QUERY_MS,
    poolSize: options.poolSize ?? 10,
    applicationName: options.applicationName ?? 'bindery',
  };
}

// Any fixed number works; both processes and the CLI must use the same one.
const MIGRATION_LOCK_KEY = 7_243_001;

/** A migration waits this long for a table's lock, then gives up and retries, so traffic never queues behind it. */
const MIGRATION_LOCK_TIMEOUT_MS = 2000;
const MIGRATION_ATTEMPTS = 30;
const LOCK_NOT_AVAILABLE = '55P03';

/**
 * Applies pending migrations in one transaction under a transaction advisory lock, so replicas starting
 * together (or parallel test workers) apply each migration exactly once, with `statement_timeout` off
 * (a long index build is no reason to fail) and a short `lock_timeout` (DESIGN 15): an `ALTER` waiting
 * behind live traffic gives up, everything rolls back and the batch is tried again. Nothing outlives the
 * transaction, so it is correct through a transaction pooler too; a failed migration applies none.
 */
export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await migrateOnce(dataSource);
    } catch (error) {
      if (!lockNotAvailable(error) || attempt >= MIGRATION_ATTEMPTS) throw error;
      // Back off a little longer each time, so a steady stream of short transactions lets the lock through.
      await new Promise((resolve) => setTimeout(resolve, 100 * Math.min(attempt, 10)));
    }
  }
}

function lockNotAvailable(error: unknown): boolean {
  const { code, driverError } = error as { code?: unknown; driverError?: { code?: unknown } };
  return code === LOCK_NOT_AVAILABLE || driverError?.code === LOCK_NOT_AVAILABLE;
}

async function migrateOnce(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.startTransaction();
    await runner.query('set local statement_timeout = 0');
    // Replicas wait for each other here without a lock timeout; the tables' locks come after it.
    await runner.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
    await runner.query(`select set_config('lock_timeout', $1, true)`, [`${MIGRATION_LOCK_TIMEOUT_MS}ms`]);
    const executor = new MigrationExecutor(dataSource, runner);
    executor.transaction = 'all';
    const applied = await executor.executePendingMigrations();
    await runner.commitTransaction();
    return applied.map((m) => m.name);
  } finally {
    if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
    await runner.release();
  }
}

/** Opens a short-lived connection, applies migrations and closes it: the `migration:run` command. */
export async function migrate(url: string): Promise<string[]> {
  const dataSource = new DataSource(dataSourceOptions({ url, poolSize: 2, applicationName: 'bindery-migrate' }));
  await dataSource.initialize();
  try {
    return await runMigrations(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

/** How a script reaches the database the processes use: the resolved URL, and the pool mode and session URL. */
export function scriptDatabase(
  settings: { readonly databaseSessionUrl: string | undefined; readonly databasePoolMode: PoolMode },
  url: string,
): Pick<DatabaseOptions, 'url' | 'sessionUrl' | 'poolMode'> {
  return { url, sessionUrl: settings.databaseSessionUrl ?? url, poolMode: settings.databasePoolMode };
}
