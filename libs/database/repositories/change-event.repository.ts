import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ControlSession } from '../control-session.js';
import type { ChangeEventType } from '../entities/change-event.entity.js';
import {
  afterCommit,
  BaseRepository,
  bind,
  duplicateKeyOf,
  visibilityCondition,
  type HostVisibility,
} from '../repository.js';

/** Channel that wakes long-polling readers after commits with events (sent by FeedWaker). */
export const EVENTS_CHANNEL = 'bindery_events';

/** The shortest time between two wake-ups a process sends while commits keep coming. */
export const WAKE_INTERVAL_MS = 10;

// Writers hold it shared from taking their seq until commit; a reader's horizon is read holding it
// exclusively, when no writer is between its seq and its commit: every seq up to the horizon is final.
export const FEED_LOCK = 7_243_003;

// The lock comes first (the join yields no row before it is held), then each event's seq in array order.
// An event with `tagIds` records each tag's host as it is now, so the feed can still judge a tag deleted
// later (DESIGN 12); within `recorded()` the lookup sees the tags as they were before its own write.
/** The append, its parameters numbered from `$first` (so it can follow a write's own parameters). */
const appendSql = (first: number): string => {
  const [lock, types, actors, hosts, data] = [0, 1, 2, 3, 4].map((i) => `$${first + i}`);
  return `
  insert into change_event (seq, type, actor, host_id, data, tag_hosts)
  select nextval('change_event_seq'), e.type, e.actor, e.host_id, e.data,
    case when jsonb_typeof(e.data->'tagIds') = 'array' then
      (select coalesce(jsonb_object_agg(t.tag_id, t.host_id), '{}') from tag t
       where t.tag_id in (select jsonb_array_elements_text(e.data->'tagIds')))
    end
  from (select pg_advisory_xact_lock_shared(${lock})) l,
       unnest(${types}::varchar[], ${actors}::varchar[], ${hosts}::varchar[], ${data}::jsonb[]) with ordinality as e(type, actor, host_id, data, n)
  order by e.n`;
};
const APPEND = appendSql(1);

/**
 * Which `config.changed` events a reader sees (DESIGN 14): every host's, or those of one host (`host` null:
 * none, since every config layer has a host). Admins only; the service decides.
 */
function configCondition(configHosts: HostVisibility, parameters: unknown[]): string {
  if (configHosts.allHosts) return '';
  if (configHosts.host === null) return `and type <> 'config.changed'`;
  return `and (type <> 'config.changed' or host_id = ${bind(parameters, configHosts.host)})`;
}

// One text per write statement (its parameter count is fixed), the same string each time: named statements
// are looked up by text, and a string built anew is hashed anew.
const RECORDED = new Map<string, string>();
function recordedSql(write: WriteStatement): string {
  let sql = RECORDED.get(write.sql);
  if (sql === undefined) {
    sql = `with written as (${write.sql}) ${appendSql(write.parameters.length + 1)}`;
    RECORDED.set(write.sql, sql);
  }
  return sql;
}

/** One data-modifying statement and its parameters, as a repository builds it for `ChangeEventRepository.recorded`. */
export interface WriteStatement {
  readonly sql: string;
  readonly parameters: readonly unknown[];
}

// A SELECT at the top (the CTEs run to completion regardless), so the driver answers rows, not a count.
const PRUNE = `
  with gone as (
    delete from change_event where at < now() - $1 * interval '1 day' returning seq
  ), mark as (
    update change_event_pruned set pruned_through = greatest(pruned_through, (select max(seq) from gone))
    where exists (select 1 from gone)
  )
  select (select count(*) from gone)::int as pruned`;

export interface NewChangeEvent {
  readonly type: ChangeEventType;
  readonly actor: string | null;
  readonly hostId: string | null;
  readonly data: Readonly<Record<string, unknown>>;
}

export interface StoredChangeEvent {
  readonly seq: number;
  readonly type: ChangeEventType;
  readonly at: Date;
  readonly actor: string | null;
  readonly data: Record<string, unknown>;
  /** For an event with `data.tagIds`: each tag's host when the event was written (null: before it was kept). */
  readonly tagHosts: Readonly<Record<string, string | null>> | null;
}

function appendParameters(events: readonly NewChangeEvent[]): unknown[] {
  return [
    FEED_LOCK,
    events.map((e) => e.type),
    events.map((e) => e.actor),
    events.map((e) => e.hostId),
    events.map((e) => JSON.stringify(e.data)),
  ];
}

/**
 * Wakes long-polling readers (every process's, through NOTIFY) after commits with events: the first at
 * once, then at most one NOTIFY per `WAKE_INTERVAL_MS` per process while commits keep coming. Sent after
 * the commit on the control session, never inside the write: NOTIFY in a transaction takes a database-wide
 * lock at commit. Each NOTIFY is a transaction and wakes every listening backend (bench peer).
 */
export class FeedWaker {
  private sending = false;
  private again = false;
  private readonly logger = new Logger('ChangeFeed');

  constructor(
    private readonly session: Pick<ControlSession, 'query'> | undefined,
    private readonly minIntervalMs = WAKE_INTERVAL_MS,
  ) {}

  wake(): void {
    if (this.session === undefined) return;
    if (this.sending) {
      this.again = true;
      return;
    }
    this.send(this.session);
  }

  private send(session: Pick<ControlSession, 'query'>): void {
    this.sending = true;
    // Commits so far are told by this NOTIFY; only those from now on need another.
    this.again = false;
    const started = Date.now();
    void session
      .query(`select pg_notify('${EVENTS_CHANNEL}', '')`, [], 'bindery_wake_feed')
      .catch((error: unknown) =>
        this.logger.warn({ err: error }, 'could not notify readers; they poll again at their timeout'),
      )
      .finally(() => {
        if (!this.again) {
          this.sending = false;
          return;
        }
        // Still "sending" while it waits: commits meanwhile ride on the next NOTIFY.
        const wait = this.minIntervalMs - (Date.now() - started);
        if (wait <= 0) this.send(session);
        else setTimeout(() => this.send(session), wait).unref();
      });
  }
}

/** The change feed's outbox (DESIGN 12): appended inside each write's transaction, read in seq order. */
@Injectable()
export class ChangeEventRepository extends BaseRepository {
  private readonly waker: FeedWaker;

  constructor(@InjectDataSource() db: DataSource, @Inject(ControlSession) session?: ControlSession) {
    super(db);
    this.waker = new FeedWaker(session);
  }

  /** Appends `events` in this repository's transaction (`in(tx)`), as its last statement. */
  async append(events: readonly NewChangeEvent[]): Promise<void> {
    if (events.length === 0) return;
    if (this.manager.queryRunner?.isTransactionActive !== true) {
      throw new Error('change events are appended inside the transaction of their change');
    }
    await this.rows(APPEND, appendParameters(events));
    if (this.tx !== undefined) afterCommit(this.tx, () => this.waker.wake());
  }

  /**
   * `write` and its events as one statement, so one implicit transaction: a single-row write needs no
   * BEGIN/COMMIT round trips (4 statements become 1). A unique violation surfaces as `DuplicateKeyError`.
   */
  async recorded(write: WriteStatement, events: readonly NewChangeEvent[]): Promise<void> {
    if (this.tx !== undefined) throw new Error('recorded() is its own transaction; inside one, use append()');
    try {
      // Outside a transaction by contract, so straight on the pool (`rows`): no query runner to take.
      await this.rows(recordedSql(write), [...write.parameters, ...appendParameters(events)]);
    } catch (error) {
      throw duplicateKeyOf(error);
    }
    this.waker.wake();
  }

  /**
   * The highest seq below which nothing can still commit. Waits at most `lockTimeoutMs` for the writers
   * in flight; null when they took longer (the caller keeps its previous horizon).
   */
  async horizon(lockTimeoutMs: number): Promise<number | null> {
    const runner = this.db.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      await runner.query(`select set_config('lock_timeout', $1, true)`, [String(lockTimeoutMs)]);
      try {
        await runner.query('select pg_advisory_xact_lock($1)', [FEED_LOCK]);
      } catch (error) {
        await runner.rollbackTransaction();
        if ((error as { driverError?: { code?: string } }).driverError?.code === '55P03') return null;
        throw error;
      }
      const rows = (await runner.query('select last_value::text as last, is_called from change_event_seq')) as {
        last: string;
        is_called: boolean;
      }[];
      await runner.commitTransaction();
      const row = rows[0];
      return row === undefined || !row.is_called ? 0 : Number(row.last);
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      await runner.release();
    }
  }

  /** Events in (`after`, `through`] a reader with `visibility` may see, in seq order, at most `limit`. */
  async page(
    visibility: HostVisibility,
    after: number,
    through: number,
    limit: number,
    configHosts: HostVisibility = { allHosts: false, host: null },
  ): Promise<StoredChangeEvent[]> {
    const parameters: unknown[] = [after, through, limit];
    const visible = `${visibilityCondition(visibility, 'host_id', parameters)} ${configCondition(configHosts, parameters)}`;
    const rows = await this.manager.query<(Omit<StoredChangeEvent, 'seq'> & { seq: string })[]>(
      `select seq, type, at, actor, data, tag_hosts as "tagHosts" from change_event
       where seq > $1 and seq <= $2 ${visible} order by seq limit $3`,
      parameters,
    );
    return rows.map((row) => ({ ...row, seq: Number(row.seq) }));
  }

  /** The highest seq pruned so far (0: none). */
  async prunedThrough(): Promise<number> {
    const rows = await this.manager.query<{ pruned: string }[]>(
      'select pruned_through::text as pruned from change_event_pruned',
    );
    return Number(rows[0]?.pruned ?? 0);
  }

  /** Deletes events older than `days` days; answers how many. */
  async prune(days: number): Promise<number> {
    const rows = await this.manager.query<{ pruned: number }[]>(PRUNE, [days]);
    return rows[0]?.pruned ?? 0;
  }
}
