import { Inject, Injectable } from '@nestjs/common';
import type { WebSocket } from 'ws';
import { SETTINGS, type Settings } from '#platform';
import { Connections, type RegistryConnection } from './connection.js';
import { PendingWrites } from './pending-writes.js';
import { RegistryService } from '../registry.service.js';

/**
 * Liveness (DESIGN 8): every WS_PING_INTERVAL_MS each socket is pinged and its instances touched; a socket
 * that sent nothing since the previous ping is dropped, and its close marks its instances disconnected.
 */
@Injectable()
export class Liveness {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly connections: Connections,
    private readonly registry: RegistryService,
    private readonly writes: PendingWrites,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.tick(), this.settings.wsPingIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** A pong or any message counts as a sign of life until the next tick. */
  watch(client: WebSocket, connection: RegistryConnection): void {
    const seen = (): void => {
      connection.alive = true;
    };
    client.on('pong', seen);
    client.on('message', seen);
  }

  private tick(): void {
    if (this.connections.stopping) return;
    const answered: string[] = [];
    for (const [client, connection] of this.connections) {
      if (!connection.alive) {
        // The close event that follows marks its instances disconnected.
        client.terminate();
        continue;
      }
      connection.alive = false;
      answered.push(...connection.instances);
      client.ping();
    }
    if (answered.length > 0) this.writes.background(this.registry.touch(answered));
  }
}
