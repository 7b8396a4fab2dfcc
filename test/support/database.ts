import { DataSource } from 'typeorm';
import { dataSourceOptions, runMigrations } from '#database';
import { ProblemException } from '#platform';

/** A migrated data source on the test database, for service tests against the real repositories. */
export async function openDatabase(): Promise<DataSource> {
  const url = process.env.DATABASE_URL;
  if (url === undefined || url === '') throw new Error('DATABASE_URL is not set (the jest global setup sets it)');
  const db = new DataSource(dataSourceOptions({ url, poolSize: 4, applicationName: 'bindery-service-test' }));
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
