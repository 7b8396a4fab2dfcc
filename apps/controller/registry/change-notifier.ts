import { Injectable, Logger } from '@nestjs/common';
import type { WebSocket } from 'ws';
import { REGISTRY_LOG_CONTEXT } from './connection.js';
import type { Notify } from './discovery.service.js';

/** A subscriber this far behind (unsent bytes) is dropped rather than buffered without bound. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/** Sends `discovery/changed` notifications to a subscriber's socket (DESIGN 8). */
@Injectable()
export class ChangeNotifier {
  private readonly logger = new Logger(REGISTRY_LOG_CONTEXT);

  /** The `notify` of a subscription made on `client`. */
  to(client: WebSocket): Notify {
    return (params) => {
      if (client.readyState !== client.OPEN) return;
      if (client.bufferedAmount > MAX_BUFFERED_BYTES) {
        this.logger.warn('subscriber is not reading its notifications; dropping it');
        client.terminate();
        return;
      }
      client.send(JSON.stringify({ jsonrpc: '2.0', method: 'discovery/changed', params }));
    };
  }
}
