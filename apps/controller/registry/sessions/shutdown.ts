import { Injectable } from '@nestjs/common';
import type { WebSocket } from 'ws';
import { Connections } from './connection.js';
import { LeaseService } from './lease.service.js';
import { Liveness } from './liveness.js';
import { PendingWrites } from './pending-writes.js';
import { CLOSE_GOING_AWAY, CLOSE_SERVICE_RESTART } from '../registry.errors.js';
import { RegistryService } from '../registry.service.js';

/** How long a shutting-down controller waits for a client to answer its 1001 close. */
const SHUTDOWN_CLOSE_TIMEOUT_MS = 2000;

/**
 * How this process lets go of its sockets: at SIGTERM (1001, DESIGN 9) after which it releases what it held,
 * and when another replica reaped its lease (1012, DESIGN 8.1) so every runtime registers again elsewhere.
 */
@Injectable()
export class RegistryShutdown {
  private done = false;

  constructor(
    private readonly connections: Connections,
    private readonly registry: RegistryService,
    private readonly writes: PendingWrites,
    private readonly liveness: Liveness,
    lease: LeaseService,
  ) {
    // Reaped (it froze, or lost the database too long): its instances were disconnected by another replica.
    lease.onLost(() => {
      for (const client of this.connections.keys()) client.close(CLOSE_SERVICE_RESTART, 'Lease lost');
    });
  }

  /** After shutdown released everything this process held, a closing socket has nothing left to mark. */
  get released(): boolean {
    return this.done;
  }

  /** A socket that opens while shutting down is closed with 1001 at once; true when it was. */
  turnedAway(client: WebSocket): boolean {
    if (!this.connections.stopping) return false;
    client.close(CLOSE_GOING_AWAY, 'Server shutting down');
    return true;
  }

  /** SIGTERM (via `app.close()`): close every socket with 1001, wait for the writes, release the lease. */
  async run(): Promise<void> {
    this.connections.stopping = true;
    this.liveness.stop();
    await Promise.all([...this.connections.keys()].map((client) => closeGracefully(client)));
    await this.writes.settled();
    try {
      await this.registry.releaseAll();
    } finally {
      this.done = true;
    }
  }
}

/** Resolves once the client answered the 1001 close, or after SHUTDOWN_CLOSE_TIMEOUT_MS by terminating it. */
function closeGracefully(client: WebSocket): Promise<void> {
  return new Promise((resolve) => {
    if (client.readyState === client.CLOSED) return resolve();
    const timer = setTimeout(() => {
      client.terminate();
      resolve();
    }, SHUTDOWN_CLOSE_TIMEOUT_MS);
    client.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
    client.close(CLOSE_GOING_AWAY, 'Server shutting down');
  });
}
