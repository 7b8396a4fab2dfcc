import DataLoader from 'dataloader';
import type { ClosedConnection, RuntimeInstanceRepository } from '#database';

/** Connections one statement disconnects at most (each holds at most 100 instances). */
const MAX_CONNECTIONS_PER_STATEMENT = 200;

/**
 * Closes that arrive in one turn of the event loop are written as one statement (DataLoader's batching):
 * 10,000 sockets closing at once become a few dozen writes instead of 10,000 commits queued on the pool.
 */
export class DisconnectBatch {
  private readonly loader: DataLoader<ClosedConnection, number>;

  constructor(instances: RuntimeInstanceRepository) {
    this.loader = new DataLoader(
      async (closed) => {
        const marked = await instances.disconnect(closed);
        // Each id counts once, for the first close that names it (one connection may be named twice).
        return closed.map((c) => c.runtimeInstanceIds.filter((id) => marked.delete(id)).length);
      },
      // After the I/O callbacks of this turn, so every close they reported joins the same statement.
      { cache: false, maxBatchSize: MAX_CONNECTIONS_PER_STATEMENT, batchScheduleFn: (run) => setImmediate(run) },
    );
  }

  /** Marks the instances `connectionId` held disconnected; answers how many it still held. */
  mark(connectionId: string, runtimeInstanceIds: readonly string[]): Promise<number> {
    return this.loader.load({ connectionId, runtimeInstanceIds });
  }
}
