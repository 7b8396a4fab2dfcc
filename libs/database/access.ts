import pg from 'pg';
import { QueryFailedError, type DataSource, type QueryRunner } from 'typeorm';
import { ControlSession } from './control-session.js';
import { ObservingTypeOrmLogger } from './query-observer.js';
import { PG_TYPES } from './timestamps.js';
import { sqlStateOf } from './pg-errors.js';

/**
 * What `DATABASE_URL` is (DESIGN 15), as the operator declares it: `session` keeps a server session per
 * pooled connection (PostgreSQL itself, or a pooler in session mode); `transaction` is a transaction
 * pooler (PgBouncer `pool_mode = transaction`): no named statements, no session state.
 */
export type PoolMode = 'session' | 'transaction';
export const POOL_MODES: readonly PoolMode[] = ['session', 'transaction'];

export interface AccessOptions {
  readonly url: string;
  /** LISTEN, the controller's lease and migrations; default `url` (never a transaction pooler). */
  readonly sessionUrl?: string;
  readonly poolMode?: PoolMode;
  readonly poolSize?: number;
  /** `statement_timeout` of pooled sessions; 0 or unset: none. In transaction mode, per transaction. */
  readonly statementTimeoutMs?: number;
  readonly applicationName?: string;
  /** Counts and reports statements; the data source's own (one logger for TypeORM's and the pool path). */
  readonly logger?: ObservingTypeOrmLogger;
}

/** A statement slower than this is logged as a warning. */
export const SLOW_QUERY_MS = 1000;
const CONNECT_TIMEOUT_MS = 5000;
const MAX_NAMED_STATEMENTS = 200;
/** `feature_not_supported`: "cached plan must not change result type" after a column was added or dropped. */
const CACHED_PLAN_CHANGED = '0A000';

/** Whether `error` (pg's, or TypeORM's wrapping it) is `0A000`: nothing of the statement ran. */
export function cachedPlanChanged(error: unknown): boolean {
  return sqlStateOf(error) === CACHED_PLAN_CHANGED;
}

/**
 * Names for statement texts, so that pg prepares each once per connection and PostgreSQL plans it once
 * per session (a parse and plan cost as much as a short statement's execution, bench peer). At most `max`
 * names are handed out, so neither pg's per-connection cache nor the server's sessions grow without bound.
 */
export class StatementNames {
  private readonly names = new Map<string, string>();
  private issued = 0;

  constructor(private readonly max: number) {}

  /** The name of `text`, or undefined once `max` names were handed out (then it runs unnamed). */
  of(text: string): string | undefined {
    const name = this.names.get(text);
    if (name !== undefined || this.issued >= this.max) return name;
    return this.rename(text);
  }

  /**
   * A fresh name for `text`: its prepared statements on every connection are left behind, so the next run
   * parses and plans it again (pg offers no public way to forget one connection's prepared statement).
   */
  renew(text: string): string | undefined {
    this.names.delete(text);
    return this.issued >= this.max ? undefined : this.rename(text);
  }

  private rename(text: string): string {
    const next = `bindery_${(this.issued += 1)}`;
    this.names.set(text, next);
    return next;
  }
}

/**
 * The one way Bindery's processes reach PostgreSQL: it owns the request pool (handed to TypeORM through
 * its documented `driver` option) and opens the session for LISTEN and the lease; it decides, from the
 * declared pool mode alone, whether statements are named and where `TimeZone=UTC` and the statement
 * timeout are set.
 */
export class DatabaseAccess {
  readonly pool: pg.Pool;
  readonly mode: PoolMode;
  /** TypeORM's `driver` option: its pool is this one. */
  readonly driver: { readonly Pool: new () => pg.Pool };
  private readonly names: StatementNames | null;
  private readonly sessionUrl: string;
  private readonly applicationName: string;
  private readonly statementTimeoutMs: number;

  private readonly log: ObservingTypeOrmLogger;

  constructor(options: AccessOptions) {
    this.log = options.logger ?? new ObservingTypeOrmLogger();
    this.mode = options.poolMode ?? 'session';
    this.sessionUrl = options.sessionUrl ?? options.url;
    this.applicationName = options.applicationName ?? 'bindery';
    this.statementTimeoutMs = options.statementTimeoutMs ?? 0;
    this.names = this.mode === 'session' ? new StatementNames(MAX_NAMED_STATEMENTS) : null;
    this.pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      application_name: this.applicationName,
      // An unreachable server fails a request within seconds (503) instead of queueing it for ever.
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      types: PG_TYPES,
      ...(this.mode === 'session' ? sessionStartup(this.statementTimeoutMs) : {}),
    });
    const pool = this.pool;
    // `new driver.Pool(...)` in TypeORM's createPool: a constructor returning an object yields that object.
    this.driver = {
      Pool: function PoolOfAccess() {
        return pool;
      } as unknown as new () => pg.Pool,
    };
  }

  /**
   * One statement outside a transaction, on the pool; logged and counted, slow ones warned, errors
   * QueryFailedError. `0A000` (a column added or dropped under a prepared statement) renames the statement
   * and runs it once more: it failed at plan time, before it read or wrote anything.
   */
  rows<T>(text: string, values: readonly unknown[] = []): Promise<T[]> {
    return this.run<T>(this.pool, text, values, true);
  }

  /**
   * One statement in the transaction of `runner` (TypeORM's, its connection from `connect()`), named like
   * `rows`' (a transaction's statements are parsed and planned again on every run otherwise: about a
   * millisecond for a sealed config write's, bench config-history). `0A000` renames the statement and
   * fails: the transaction is aborted by then, and `UnitOfWork` runs it again once.
   */
  async rowsIn<T>(runner: QueryRunner, text: string, values: readonly unknown[] = []): Promise<T[]> {
    const client = (await runner.connect()) as pg.ClientBase;
    return this.run<T>(client, text, values, false);
  }

  private async run<T>(
    target: Pick<pg.ClientBase, 'query'>,
    text: string,
    values: readonly unknown[],
    retry: boolean,
  ): Promise<T[]> {
    const logger = this.log;
    logger.logQuery(text);
    const started = Date.now();
    try {
      let result: pg.QueryResult;
      try {
        result = await target.query(this.config(text, values, this.names?.of(text)));
      } catch (error) {
        if (this.names === null || !cachedPlanChanged(error)) throw error;
        const renewed = this.names.renew(text);
        if (!retry) throw error;
        result = await target.query(this.config(text, values, renewed));
      }
      const elapsed = Date.now() - started;
      if (elapsed > SLOW_QUERY_MS) logger.logQuerySlow(elapsed, text);
      return result.rows as T[];
    } catch (error) {
      logger.logQueryError(error as Error, text);
      throw new QueryFailedError(text, values as unknown[], error as Error);
    }
  }

  /**
   * The statement that opens every transaction in transaction mode (session state cannot outlive it
   * there), with its parameters; undefined in session mode, where the connection's start-up set both.
   */
  transactionSettings(): { readonly text: string; readonly values: unknown[] } | undefined {
    if (this.mode === 'session') return undefined;
    return {
      text: `select set_config('TimeZone', 'UTC', true), set_config('statement_timeout', $1, true)`,
      values: [String(this.statementTimeoutMs)],
    };
  }

  /** A new dedicated session (LISTEN, the lease) on the session URL; it connects on first use. */
  openSession(name: string): ControlSession {
    return new ControlSession(this.sessionUrl, `${this.applicationName}-${name}`);
  }

  private config(text: string, values: readonly unknown[], name: string | undefined): pg.QueryConfig {
    return name === undefined ? { text, values: values as unknown[] } : { name, text, values: values as unknown[] };
  }
}

/** Start-up parameters of a session: sent once per connection, so they cost no statement. */
export function sessionStartup(statementTimeoutMs: number): { options: string; statement_timeout?: number } {
  return {
    options: '-c TimeZone=UTC',
    ...(statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs } : {}),
  };
}

const ACCESS = new WeakMap<object, DatabaseAccess>();

/** Records `access` as the layer behind a data source built with `access.driver`. */
export function registerAccess(access: DatabaseAccess): void {
  ACCESS.set(access.driver, access);
}

/** The access layer behind `db` (every data source is built by `dataSourceOptions`). */
export function accessOf(db: DataSource): DatabaseAccess {
  const driver = (db.options as { driver?: object }).driver;
  const access = driver === undefined ? undefined : ACCESS.get(driver);
  if (access === undefined) throw new Error('the data source was not built by dataSourceOptions');
  return access;
}
