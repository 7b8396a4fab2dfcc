import pg from 'pg';

/** A transaction holding row locks: what a test makes another request meet. */
export class LockHolder {
  private constructor(
    private readonly client: pg.Client,
    readonly pid: number,
  ) {}

  /** Opens a transaction on its own connection and locks the rows `sql` selects (it ends in `for update`). */
  static async lock(sql: string, parameters: unknown[]): Promise<LockHolder> {
    const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await client.connect();
    await client.query('begin');
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    await client.query(sql, parameters);
    return new LockHolder(client, rows[0]?.pid ?? 0);
  }

  /**
   * `request`'s answer, given while the locks are still held; fails as soon as a statement waits on one of
   * them instead (PostgreSQL's `pg_blocking_pids`), so a request that would wait fails at once, never hangs.
   */
  async answeredWithoutWaiting<T>(request: Promise<T>): Promise<T> {
    const probe = new pg.Client({ connectionString: process.env.DATABASE_URL });
    await probe.connect();
    let answered = false;
    const blocked = (async (): Promise<void> => {
      while (!answered) {
        const { rows } = await probe.query<{ n: number }>(
          'select count(*)::int as n from pg_stat_activity where $1 = any(pg_blocking_pids(pid))',
          [this.pid],
        );
        if ((rows[0]?.n ?? 0) > 0) throw new Error('the request waited on a row lock it was not to take');
      }
    })();
    try {
      // `blocked` ends without failing only once the request answered, so the race is the request's.
      return await Promise.race([request, blocked.then(() => request)]);
    } finally {
      answered = true;
      await blocked.catch(() => undefined);
      await probe.end();
    }
  }

  async release(): Promise<void> {
    await this.client.query('rollback').catch(() => undefined);
    await this.client.end();
  }
}
