import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import {
  ChangeEventRepository,
  ControlSession,
  EVENTS_CHANNEL,
  TagRepository,
  type HostVisibility,
  type StoredChangeEvent,
} from '#database';
import { ProblemException, SETTINGS, type Settings } from '#platform';
import { can, isGlobalAdmin, type Principal } from '#token-binding';
import { canSee, visibilityOf } from '../common/host-access.js';
import type { ListEventsQuery } from './dto/list-events.query.js';
import { toEventView, type EventPage } from './event.view.js';

/** Long-polls waiting at once per process (DESIGN 12); beyond, 503. */
export const MAX_WAITING = 1000;
/** How long a horizon read waits for writers in flight (new writers queue behind it meanwhile); then the previous horizon is used. */
const HORIZON_LOCK_TIMEOUT_MS = 500;
const PRUNE_INTERVAL_MS = 60 * 60 * 1000;

/**
 * The change feed (DESIGN 12). A reader sees events only up to the horizon: the highest seq below which
 * no transaction can still commit (ChangeEventRepository.horizon), so a consumer that resumes from its
 * last seq never skips an event that committed late with a lower seq. Long-polls wait on this process's
 * one listening session (ControlSession), never on a pooled connection.
 */
@Injectable()
export class EventsService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('Events');
  private horizonRun: Promise<number> | undefined;
  private lastHorizon = 0;
  private listening: Promise<void> | undefined;
  private hooked = false;
  /** Resolvers of the long-polls waiting for the next commit with events. */
  private readonly waiting = new Set<() => void>();
  private pruneTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly events: ChangeEventRepository,
    private readonly session: ControlSession,
    private readonly tags: TagRepository,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  onModuleInit(): void {
    const prune = (): void => {
      this.events.prune(this.settings.eventsRetentionDays).then(
        (pruned) => pruned > 0 && this.logger.log({ pruned }, 'pruned old change events'),
        (error: unknown) => this.logger.warn({ err: error }, 'pruning change events failed'),
      );
    };
    setTimeout(prune, 5000).unref();
    this.pruneTimer = setInterval(prune, PRUNE_INTERVAL_MS);
    this.pruneTimer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.pruneTimer);
    this.wakeAll();
  }

  async list(principal: Principal, query: ListEventsQuery): Promise<EventPage> {
    const pruned = await this.events.prunedThrough();
    const after = query.after ?? pruned;
    if (after < pruned) {
      throw new ProblemException(
        410,
        `Events up to seq ${pruned} were pruned (EVENTS_RETENTION_DAYS); events after ${after} may be missing. ` +
          `Read again from after=${pruned}.`,
      );
    }
    const deadline = query.wait === undefined ? 0 : Date.now() + query.wait * 1000;
    if (query.wait !== undefined) await this.listen();
    for (;;) {
      // Armed before reading, so a commit between the read and the wait still wakes this poll.
      const changed = query.wait === undefined ? undefined : this.nextChange();
      const horizon = await this.horizon();
      if (horizon > after) {
        changed?.cancel();
        const rows = await this.events.page(
          visibilityOf(principal),
          after,
          horizon,
          query.limit,
          configHostsOf(principal),
        );
        const last = rows.at(-1);
        // Fewer rows than asked for: everything up to the horizon was examined, shown or not.
        const next = rows.length === query.limit && last !== undefined ? last.seq : horizon;
        return { events: (await this.withVisibleTags(principal, rows)).map(toEventView), next };
      }
      const left = deadline - Date.now();
      if (changed === undefined || left <= 0) {
        changed?.cancel();
        return { events: [], next: after };
      }
      await changed.until(left);
    }
  }

  /**
   * The page as `principal` may read it: each event's `tagIds` keeps only the tags the reader can see, as
   * GET does (DESIGN 4.3, 12), judged by each tag's current host, or by its host when the event was written
   * for a tag deleted since. One statement for the whole page; none for an admin or a page without tag ids.
   */
  private async withVisibleTags(principal: Principal, rows: StoredChangeEvent[]): Promise<StoredChangeEvent[]> {
    if (isGlobalAdmin(principal, 'tags:read')) return rows;
    const ids = new Set(rows.flatMap(tagIdsOf));
    if (ids.size === 0) return rows;
    const current = await this.tags.hostsOf([...ids]);
    const visible = (row: StoredChangeEvent, tagId: string): boolean => {
      const host: string | null | undefined = current.has(tagId) ? current.get(tagId) : row.tagHosts?.[tagId];
      // undefined: a deleted tag whose host was not kept (events written before migration 1763700012000).
      return host !== undefined && canSee(principal, host);
    };
    return rows.map((row) =>
      Array.isArray(row.data.tagIds)
        ? { ...row, data: { ...row.data, tagIds: tagIdsOf(row).filter((tagId) => visible(row, tagId)) } }
        : row,
    );
  }

  /** One horizon read at a time per process; concurrent readers share it. */
  private horizon(): Promise<number> {
    this.horizonRun ??= this.events
      .horizon(HORIZON_LOCK_TIMEOUT_MS)
      .then((horizon) => {
        // Writers held the lock too long: the last horizon is still safe, only older.
        if (horizon !== null) this.lastHorizon = Math.max(this.lastHorizon, horizon);
        return this.lastHorizon;
      })
      .finally(() => {
        this.horizonRun = undefined;
      });
    return this.horizonRun;
  }

  private listen(): Promise<void> {
    if (this.listening !== undefined) return this.listening;
    if (!this.hooked) {
      // A reconnect may have lost a notification: every waiting poll reads again.
      this.session.onReconnect(() => this.wakeAll());
      this.hooked = true;
    }
    this.listening = this.session
      .listen(EVENTS_CHANNEL, () => this.wakeAll())
      .catch((error: unknown) => {
        this.listening = undefined;
        throw error;
      });
    return this.listening;
  }

  private wakeAll(): void {
    for (const wake of this.waiting) wake();
  }

  private nextChange(): { until(ms: number): Promise<void>; cancel(): void } {
    if (this.waiting.size >= MAX_WAITING) {
      throw new ProblemException(503, `More than ${MAX_WAITING} long-polls are waiting; retry shortly`, {
        headers: { 'retry-after': '1' },
      });
    }
    let wake: () => void = () => undefined;
    const woken = new Promise<void>((resolve) => (wake = resolve));
    const entry = (): void => wake();
    this.waiting.add(entry);
    const cancel = (): void => {
      this.waiting.delete(entry);
    };
    return {
      cancel,
      until: async (ms) => {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([woken, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
        clearTimeout(timer);
        cancel();
      },
    };
  }
}

/**
 * Whose `config.changed` events `principal` reads (DESIGN 14, 16): a config admin without `host` every
 * host's, one with a `host` claim that host's, anyone else none (config values are admin business).
 */
function configHostsOf(principal: Principal): HostVisibility {
  if (!can(principal, 'config:admin')) return { allHosts: false, host: null };
  return principal.host === null ? { allHosts: true } : { allHosts: false, host: principal.host };
}

/** The tag ids an event names (`entity.*` events carry them in `data.tagIds`). */
function tagIdsOf(event: StoredChangeEvent): string[] {
  const tagIds = event.data.tagIds;
  return Array.isArray(tagIds) ? tagIds.filter((tagId): tagId is string => typeof tagId === 'string') : [];
}
