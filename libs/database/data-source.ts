import type { DataSourceOptions, EntitySchema, MixedList } from 'typeorm';
import { DataSource, MigrationExecutor } from 'typeorm';
import { ENTITIES } from './entities/index.js';
import { migrations } from './migrations/index.js';
import { ObservingTypeOrmLogger, type SqlErrorSink } from './query-observer.js';
import { PG_TYPES } from './timestamps.js';

/** A statement slower than this is logged as a warning (TypeORM's and the repositories' pool path alike). */
export const SLOW_QUERY_MS = 1000;

/** Key of `extra`: whether hot statements may be named (prepared once per connection); false behind a pooler. */
export const NAMED_STATEMENTS = 'binderyNamedStatements';

export interface DatabaseOptions {
  readonly url: string;
  /** A direct connection when `url` is a transaction pooler (DESIGN 15); unset or equal: `url` keeps sessions. */
  readonly sessionUrl?: string;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own entity list type
  readonly entities?: MixedList<Function | string | EntitySchema>;
  readonly poolSize?: number;
  /** Server-side `statement_timeout` of every pooled connection; 0 or unset: none. Behind a pooler, the pooler's. */
  readonly statementTimeoutMs?: number;
  readonly applicationName?: string;
  readonly sink?: SqlErrorSink;
  /**
   * Name hot statements (prepared once per connection) unless `sessionUrl` declares `url` a pooler. Only the
   * processes set it, which always pass their `sessionUrl`; a script or test that knows only `url` cannot tell.
   */
  readonly namedStatements?: boolean;
}

/** One definition of how every process connects: migrations only, never `synchronize`. */
export function dataSourceOptions(options: DatabaseOptions): DataSourceOptions {
  return {
    type: 'postgres',
    url: options.url,
    entities: options.entities ?? [...ENTITIES],
    migrations,
    migrationsTableName: 'typeorm_migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    logging: ['error', 'warn', 'migration'],
    logger: new ObservingTypeOrmLogger(options.sink),
    maxQueryExecutionTime: SLOW_QUERY_MS,
    poolSize: options.poolSize ?? 10,
    applicationName: options.applicationName ?? 'bindery',
    extra: {
      // Sent in each connection's start-up packet, so every pooled connection has it from its first query.
      // PgBouncer refuses that parameter: behind it the pooler's server connections carry the timeout.
      ...(options.statementTimeoutMs && !behindPooler(options)
        ? { statement_timeout: options.statementTimeoutMs }
        : {}),
      // An unreachable server fails a request within seconds (503) instead of queueing it for ever.
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      // timestamptz parsed without pg's regular expressions (same Dates, property-tested).
      types: PG_TYPES,
      // Read by the repositories' pool path (pg ignores it): named statements on direct connections only.
      [NAMED_STATEMENTS]: options.namedStatements === true && !behindPooler(options),
    },
  };
}

const CONNECT_TIMEOUT_MS = 5000;

/** True when `url` is a transaction pooler: it keeps no session, so sessions go to `sessionUrl`. */
export function behindPooler(options: Pick<DatabaseOptions, 'url' | 'sessionUrl'>): boolean {
  return options.sessionUrl !== undefined && options.sessionUrl !== options.url;
}

// Any fixed number works; both processes and the CLI must use the same one.
const MIGRATION_LOCK_KEY = 7_243_001;

/**
 * Applies pending migrations in one transaction under a transaction advisory lock, so replicas starting
 * together (or parallel test workers) apply each migration exactly once, and with `statement_timeout` off
 * for that transaction only (`SET LOCAL`): a long index build is no reason to fail. Nothing outlives the
 * transaction, so it is correct through a transaction pooler too; a failed migration applies none.
 */
export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.startTransaction();
    await runner.query('set local statement_timeout = 0');
    await runner.query('select pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
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
