import { Injectable, Logger } from '@nestjs/common';
import { REGISTRY_LOG_CONTEXT } from './connection.js';

/** Registry writes in flight, so shutdown (and tests) can wait until every one has finished. */
@Injectable()
export class PendingWrites {
  private readonly logger = new Logger(REGISTRY_LOG_CONTEXT);
  private readonly pending = new Set<Promise<void>>();

  /** Counts `work` as pending until it settles; returns it unchanged. */
  track<T>(work: Promise<T>): Promise<T> {
    const done = work.then(
      () => undefined,
      () => undefined,
    );
    this.pending.add(done);
    void done.finally(() => this.pending.delete(done));
    return work;
  }

  /** A write no caller awaits (a close, a liveness touch): its failure is logged, never thrown. */
  background(work: Promise<unknown>): void {
    void this.track(work).catch((error: unknown) => {
      this.logger.error({ err: error }, 'registry update failed');
    });
  }

  /** Resolves once every registry write started so far has finished. */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}
