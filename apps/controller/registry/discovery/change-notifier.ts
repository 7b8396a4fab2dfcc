import { Injectable, Logger } from '@nestjs/common';
import type { WebSocket } from 'ws';
import { REGISTRY_LOG_CONTEXT } from '../sessions/connection.js';
import type { Notify } from './discovery.service.js';

/** A subscriber this far behind (unsent bytes) is dropped rather than buffered without bound. */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;

/** Sends server notifications to sockets: `discovery/changed` (DESIGN 8) and `config/changed` (DESIGN 14). */
@Injectable()
export class ChangeNotifier {
  private readonly logger = new Logger(REGISTRY_LOG_CONTEXT);

  /** The `notify` of a subscription made on `client`. */
  to(client: WebSocket): Notify {
    return (params) => this.send(client, 'discovery/changed', params);
  }

  /** One notification frame; false when the socket is gone or was dropped for not reading. */
  send(client: WebSocket, method: string, params: object): boolean {
    if (client.readyState !== client.OPEN) return false;
    if (client.bufferedAmount > MAX_BUFFERED_BYTES) {
      this.logger.warn({ method }, 'subscriber is not reading its notifications; dropping it');
      client.terminate();
      return false;
    }
    client.send(JSON.stringify({ jsonrpc: '2.0', method, params }));
    return true;
  }
}
