import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrations, type DatabaseOptions, type PoolMode } from '#database';
import { ProblemException } from '#platform';

/**
 * The suite's database as the processes would reach it: DATABASE_URL, and in CI's PgBouncer pass the
 * pooler's declared mode and the direct session URL (DESIGN 15).
 */
export function testDatabaseOptions(): Pick<DatabaseOptions, 'url' | 'sessionUrl' | 'poolMode'> {
  const url = process.env.DATABASE_URL;
  if (url === undefined || url === '') throw new Error('DATABASE_URL is not set (the jest global setup sets it)');
  const session = process.env.DATABASE_SESSION_URL;
  const mode = process.env.DATABASE_POOL_MODE;
  return {
    url,
    ...(session ? { sessionUrl: session } : {}),
    ...(mode ? { poolMode: mode as PoolMode } : {}),
  };
}

/** The environment that hands the suite's database to a process or script (see `testDatabaseOptions`). */
export function testDatabaseEnv(): Record<string, string> {
  return {
    DATABASE_URL: process.env.DATABASE_URL ?? '',
    DATABASE_SESSION_URL: process.env.DATABASE_SESSION_URL ?? '',
    DATABASE_POOL_MODE: process.env.DATABASE_POOL_MODE ?? '',
  };
}

/** A migrated data source on the test database, for service tests against the real repositories. */
export async function openDatabase(): Promise<DataSource> {
  const db = new DataSource(
    dataSourceOptions({ ...testDatabaseOptions(), poolSize: 4, applicationName: 'bindery-service-test' }),
  );
  await db.initialize();
  await runMigrations(db);
  return db;
}

/** The HTTP status a service call answers: 200 when it resolves, the ProblemException's status when not. */
export async function statusOf(work: Promise<unknown>): Promise<number> {
  try {
    await work;
  } catch (error) {
    if (error instanceof ProblemException) return error.getStatus();
    throw error;
  }
  return 200;
}
