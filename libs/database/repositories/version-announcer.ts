import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { ControlSession } from '../control-session.js';
import { EVENTS_CHANNEL } from './change-event.repository.js';

/** Channel told of every committed layer version (the controllers' push listens, DESIGN 14). */
export const CONFIG_CHANNEL = 'bindery_config';

/**
 * Committed versions' NOTIFYs, in order, and the change feed's wake-up for their `config.changed` events, in
 * one transaction that need not wait for its flush: a lost notification is no lost data (controllers re-read
 * after a reconnect; runtimes compare ETags; feed readers poll again at their timeout).
 */
const ANNOUNCE = `
  select set_config('synchronous_commit', 'off', true), pg_notify('${EVENTS_CHANNEL}', ''),
         (select count(pg_notify('${CONFIG_CHANNEL}', payload)) from unnest($1::text[]) as payload)`;

/**
 * Sends the NOTIFY of each committed version on the process's control session, right after the commit
 * rather than inside the write: a NOTIFY inside a transaction takes a database-wide lock from the start of
 * its commit until it is flushed, so notifying writers could not share flushes (bench config-history).
 * Versions committed while a send runs go together in the next one.
 */
export class VersionAnnouncer {
  private readonly logger = new Logger('ConfigHistory');
  private queue: { readonly payload: string; readonly sent: () => void }[] = [];
  private sending = false;

  constructor(
    private readonly session: ControlSession,
    private readonly db: DataSource,
  ) {}

  announce(payload: string): Promise<void> {
    return new Promise((sent) => {
      this.queue.push({ payload, sent });
      if (this.sending) return;
      this.sending = true;
      // After this turn's I/O: commits answered in the same turn go out in one statement.
      setImmediate(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      const payloads = [batch.map((b) => b.payload)];
      try {
        await this.session.query(ANNOUNCE, payloads, 'bindery_announce_versions');
      } catch (error) {
        // The control session is down: the pool's sessions may not be.
        await this.db
          .query(ANNOUNCE, payloads)
          .catch(() =>
            this.logger.warn(
              { err: error },
              'could not notify controllers of config versions; runtimes see them on their next read',
            ),
          );
      }
      for (const b of batch) b.sent();
    }
    this.sending = false;
  }
}
