import pg from 'pg';

/** The column the expand step adds to every table and the contract step drops (DESIGN 15). */
export const PROBE_COLUMN = 'bindery_upgrade_probe';

/** Bindery's tables (every table of `public` but TypeORM's migration record). */
async function tables(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `select table_name as name from information_schema.tables
      where table_schema = 'public' and table_type = 'BASE TABLE' and table_name <> 'typeorm_migrations'
      order by table_name`,
  );
  return rows.map((r) => r.name);
}

/** One `alter table` per table, each with a short `lock_timeout` and retried, as a real migration takes its locks. */
async function alterEach(url: string, alter: (table: string) => string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url, application_name: 'bindery-test-migration' });
  await client.connect();
  try {
    const names = await tables(client);
    for (const table of names) {
      for (let attempt = 1; ; attempt += 1) {
        try {
          await client.query(`set lock_timeout = '500ms'`);
          await client.query(alter(table));
          break;
        } catch (error) {
          // 55P03 lock_not_available: traffic held the table; try again (a migration's retry).
          if ((error as { code?: string }).code !== '55P03' || attempt >= 40) throw error;
        }
      }
    }
    return names;
  } finally {
    await client.end();
  }
}

/** The expand step of a release: a nullable column added to every table. Returns the tables it touched. */
export function addProbeColumn(url: string): Promise<string[]> {
  return alterEach(url, (table) => `alter table "${table}" add column if not exists ${PROBE_COLUMN} text`);
}

/** The contract step one release later: the column dropped again. */
export function dropProbeColumn(url: string): Promise<string[]> {
  return alterEach(url, (table) => `alter table "${table}" drop column if exists ${PROBE_COLUMN}`);
}

/** A database of the test's own on the test server: schema changes there touch no other spec's tables. */
export interface ScratchDatabase {
  /** DATABASE_URL for the processes (through the pooler when the suite runs behind one). */
  readonly url: string;
  /** DATABASE_SESSION_URL: a direct connection to the same database. */
  readonly sessionUrl: string;
  drop(): Promise<void>;
}

const withDatabase = (url: string, database: string): string => {
  const next = new URL(url);
  next.pathname = `/${database}`;
  return next.toString();
};

/** Creates an empty database named after `label` (the processes migrate it when they start). */
export async function scratchDatabase(label: string): Promise<ScratchDatabase> {
  const url = process.env.DATABASE_URL ?? '';
  const session = process.env.DATABASE_SESSION_URL || url;
  const database = `bindery_${label}_${process.pid}_${Date.now().toString(36)}`.toLowerCase();
  const admin = new pg.Client({ connectionString: session });
  await admin.connect();
  try {
    await admin.query(`create database ${database}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(url, database),
    sessionUrl: withDatabase(session, database),
    async drop() {
      const client = new pg.Client({ connectionString: session });
      await client.connect();
      try {
        await client.query(`drop database if exists ${database} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}
