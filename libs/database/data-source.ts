import type { DataSourceOptions, EntitySchema, MixedList } from 'typeorm';
import { DataSource } from 'typeorm';
import { ENTITIES } from './entities/index.js';
import { migrations } from './migrations/index.js';
import { ObservingTypeOrmLogger, type SqlErrorSink } from './query-observer.js';

export interface DatabaseOptions {
  readonly url: string;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own entity list type
  readonly entities?: MixedList<Function | string | EntitySchema>;
  readonly poolSize?: number;
  readonly applicationName?: string;
  readonly sink?: SqlErrorSink;
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
    maxQueryExecutionTime: 1000,
    poolSize: options.poolSize ?? 10,
    applicationName: options.applicationName ?? 'bindery',
  };
}

// Any fixed number works; both processes and the CLI must use the same one.
const MIGRATION_LOCK_KEY = 7_243_001;

/**
 * Applies pending migrations under a session advisory lock, so replicas starting together (or
 * parallel test workers) apply each migration exactly once.
 */
export async function runMigrations(dataSource: DataSource): Promise<string[]> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  } finally {
    await runner.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
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
