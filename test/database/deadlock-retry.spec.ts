import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { Tx, UnitOfWork } from '#database';
import { BaseRepository } from '../../libs/database/repository.js';
import { startApi, type TestApi } from '../support/api.js';

/**
 * Two transactions taking the same two rows in opposite orders deadlock; PostgreSQL aborts one (`40P01`)
 * before anything of it commits, and `UnitOfWork.run` runs it once more (counters of two writers on one
 * shard can meet so, migration TagUsage): both writes land, and the caller sees no error.
 */
const table = `deadlock_${process.pid}_${Date.now().toString(36)}`;
let api: TestApi;
let db: DataSource;

class Rows extends BaseRepository {
  async bump(id: number): Promise<void> {
    await this.rows(`update ${table} set n = n + 1 where id = $1`, [id]);
  }
}

beforeAll(async () => {
  // The first waiter waits for PostgreSQL's deadlock check (deadlock_timeout, 1 s) and, on a busy machine, for the
  // other side's second statement to arrive: the default 5 s statement_timeout must not cancel it first (57014).
  api = await startApi({ DB_STATEMENT_TIMEOUT_MS: '600000' });
  db = api.app.get(DataSource);
  await db.query(`create table ${table} (id int primary key, n int not null)`);
  await db.query(`insert into ${table} values (1, 0), (2, 0)`);
});
afterAll(async () => {
  await db.query(`drop table if exists ${table}`);
  await api.close();
});

/** Two units of work that each take one row, wait until both hold theirs, then take the other's. */
function crossed(run: (work: Parameters<UnitOfWork['run']>[0]) => Promise<unknown>) {
  let attempts = 0;
  let holding = 0;
  let bothHold!: () => void;
  const barrier = new Promise<void>((resolve) => (bothHold = resolve));
  const unit = (first: number, second: number) =>
    run(async (tx) => {
      attempts += 1;
      const rows = new Rows(db).in(tx);
      await rows.bump(first);
      holding += 1;
      if (holding === 2) bothHold();
      await barrier;
      await rows.bump(second);
    });
  return { results: Promise.allSettled([unit(1, 2), unit(2, 1)]), attempts: () => attempts };
}

describe('UnitOfWork and deadlocks', () => {
  it('runs the transaction PostgreSQL chose as the victim once more: both commit', async () => {
    const uow = api.app.get(UnitOfWork);
    const { results, attempts } = crossed((work) => uow.run(work));
    // The reason, not just the status: a failure names what refused the retry.
    expect((await results).map((r): unknown => (r.status === 'fulfilled' ? r.status : (r.reason as unknown)))).toEqual([
      'fulfilled',
      'fulfilled',
    ]);
    expect(attempts()).toBe(3);
    const rows = await db.query<{ n: number }[]>(`select n from ${table} order by id`);
    expect(rows.map((r) => r.n)).toEqual([2, 2]);
  });

  it('is not vacuous: without the retry one of them fails with 40P01', async () => {
    const { results } = crossed((work) => db.transaction(async (manager) => work(Tx.of(manager))));
    const settled = await results;
    const failed = settled.filter((r) => r.status === 'rejected');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ reason: { driverError: { code: '40P01' } } });
  });
});
