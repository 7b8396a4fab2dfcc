import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { DataSource, type MigrationInterface, type QueryRunner } from 'typeorm';
import { dataSourceOptions, runMigrations } from '#database';
import { startApi, type TestApi } from '../support/api.js';

const url = (): string => process.env.DATABASE_URL ?? '';
// CI's PgBouncer run (DESIGN 15): the pooler refuses a statement_timeout start-up parameter and sets its own.
const sessionUrl = (): string => process.env.DATABASE_SESSION_URL || url();
const pooled = sessionUrl() !== url();

// First: Nest's static Logger follows the app that set it last, and this test reads that app's log.
describe('a failed statement never puts its parameters in a log line', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  it('neither the query log nor the error log carries the value', async () => {
    const marker = 'MARKER-3f1c-private-key-material';
    const error = await api.app
      .get(DataSource)
      .query('select $1::int', [marker])
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(String((error as Error).message)).toContain(marker);
    // What the HTTP and JSON-RPC error paths do with an unexpected error.
    new Logger('Errors').error({ err: error }, 'unhandled error');
    const text = api.logs.raw.join('\n');
    expect(text).toContain('query failed');
    expect(text).toContain('unhandled error');
    expect(text).toContain('invalid input syntax for type integer');
    expect(text).not.toContain(marker);
  });
});

(pooled ? describe.skip : describe)('DB_POOL_SIZE and DB_STATEMENT_TIMEOUT_MS reach every connection', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi({ DB_POOL_SIZE: '3', DB_STATEMENT_TIMEOUT_MS: '1234' });
  });
  afterAll(() => api.close());

  it('every pooled connection has the statement timeout', async () => {
    const db = api.app.get(DataSource);
    // Three at once: each on its own pooled connection.
    const rows = await Promise.all(
      [0, 1, 2].map(() => db.query<{ statement_timeout: string }[]>('show statement_timeout')),
    );
    expect(rows.map((r) => r[0]?.statement_timeout)).toEqual(['1234ms', '1234ms', '1234ms']);
  });

  it('the pool never opens more than DB_POOL_SIZE connections', async () => {
    const db = api.app.get(DataSource);
    const pids = await Promise.all(
      Array.from({ length: 8 }, () => db.query<{ pid: number }[]>('select pg_backend_pid() as pid, pg_sleep(0.05)')),
    );
    expect(new Set(pids.map((r) => r[0]?.pid)).size).toBeLessThanOrEqual(3);
  });

  it('a statement over the timeout is cancelled', async () => {
    await expect(api.app.get(DataSource).query('select pg_sleep(2)')).rejects.toThrow(/statement timeout/);
  });
});

describe('migrations run without statement_timeout, under their lock', () => {
  class SlowMigration1700000000000 implements MigrationInterface {
    name = 'SlowMigration1700000000000';
    async up(runner: QueryRunner): Promise<void> {
      await runner.query('select pg_sleep(0.3)');
    }
    async down(): Promise<void> {}
  }

  it('a migration slower than DB_STATEMENT_TIMEOUT_MS completes', async () => {
    const table = `test_migrations_${Date.now().toString(36)}`;
    const db = new DataSource({
      ...dataSourceOptions({
        url: sessionUrl(),
        poolSize: 2,
        statementTimeoutMs: 100,
        applicationName: 'bindery-test',
      }),
      migrations: [SlowMigration1700000000000],
      migrationsTableName: table,
    });
    await db.initialize();
    try {
      await expect(runMigrations(db)).resolves.toEqual(['SlowMigration1700000000000']);
      // The connection goes back to the pool with the timeout it had.
      const rows = await db.query<{ statement_timeout: string }[]>('show statement_timeout');
      expect(rows[0]?.statement_timeout).toBe('100ms');
    } finally {
      await db.query(`drop table if exists ${table}`);
      await db.destroy();
    }
  });
});
