import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { DatabaseAccess, dataSourceOptions, UnitOfWork } from '#database';
import { BaseRepository } from '../../libs/database/repository.js';

/**
 * DESIGN 15: a column added under a named statement that reads a whole row makes PostgreSQL answer
 * `0A000 cached plan must not change result type`; the access layer renames the statement and runs it
 * once more, so the caller sees the new row, never the error.
 */
const direct = (): string => process.env.DATABASE_SESSION_URL || (process.env.DATABASE_URL ?? '');
const table = `cached_plan_${process.pid}_${Date.now().toString(36)}`;
let admin: pg.Client;
let access: DatabaseAccess;

beforeAll(async () => {
  admin = new pg.Client({ connectionString: direct() });
  await admin.connect();
  await admin.query(`create table ${table} (id int primary key, a text)`);
  await admin.query(`insert into ${table} values (1, 'one')`);
  // One connection: the statement is prepared on the session the ALTER then invalidates.
  access = new DatabaseAccess({ url: direct(), poolSize: 1 });
});
afterAll(async () => {
  await access?.pool.end();
  await admin?.query(`drop table if exists ${table}`);
  await admin?.end();
});

describe('a whole-row statement across a schema change', () => {
  const read = (): Promise<Record<string, unknown>[]> => access.rows(`select * from ${table} where id = $1`, [1]);

  it('is named, and after a column is added it answers the new row instead of 0A000', async () => {
    expect(await read()).toEqual([{ id: 1, a: 'one' }]);
    expect(await read()).toEqual([{ id: 1, a: 'one' }]);
    const client = await access.pool.connect();
    const prepared = await client.query<{ name: string }>(`select name from pg_prepared_statements`);
    client.release();
    expect(prepared.rows.map((r) => r.name)).toEqual([expect.stringMatching(/^bindery_\d+$/)]);

    await admin.query(`alter table ${table} add column b text default 'new'`);
    expect(await read()).toEqual([{ id: 1, a: 'one', b: 'new' }]);
    await admin.query(`alter table ${table} drop column a`);
    expect(await read()).toEqual([{ id: 1, b: 'new' }]);
  });

  it('without the retry the same change is 0A000 (the case is real)', async () => {
    const client = await access.pool.connect();
    try {
      const statement = { name: 'plain_prepared', text: `select * from ${table} where id = $1`, values: [1] };
      await client.query(statement);
      await admin.query(`alter table ${table} add column c int`);
      await expect(client.query(statement)).rejects.toMatchObject({ code: '0A000' });
    } finally {
      client.release(true);
    }
  });
});

describe('a whole-row statement in a transaction across a schema change', () => {
  const own = `cached_plan_tx_${process.pid}_${Date.now().toString(36)}`;
  class WholeRows extends BaseRepository {
    read(id: number): Promise<Record<string, unknown>[]> {
      return this.rows(`select * from ${own} where id = $1`, [id]);
    }
  }
  let source: DataSource;

  beforeAll(async () => {
    await admin.query(`create table ${own} (id int primary key, a text)`);
    await admin.query(`insert into ${own} values (1, 'one')`);
    // One connection: the transaction's statement is prepared on the session the ALTER then invalidates.
    source = new DataSource(dataSourceOptions({ url: direct(), poolSize: 1 }));
    await source.initialize();
  });
  afterAll(async () => {
    await source?.destroy();
    await admin?.query(`drop table if exists ${own}`);
  });

  it('is named in the transaction, and after a column is added the unit of work runs again once', async () => {
    const rows = new WholeRows(source);
    const work = new UnitOfWork(source);
    expect(await work.run((tx) => rows.in(tx).read(1))).toEqual([{ id: 1, a: 'one' }]);
    const prepared = await source.query<{ statement: string }[]>('select statement from pg_prepared_statements');
    expect(prepared.map((p) => p.statement)).toContain(`select * from ${own} where id = $1`);

    await admin.query(`alter table ${own} add column b text default 'new'`);
    let runs = 0;
    const after = await work.run(async (tx) => {
      runs += 1;
      return rows.in(tx).read(1);
    });
    expect(after).toEqual([{ id: 1, a: 'one', b: 'new' }]);
    expect(runs).toBe(2);
  });
});
