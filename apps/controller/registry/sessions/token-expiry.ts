import { Inject, Injectable } from '@nestjs/common';
import type { WebSocket } from 'ws';
import { SETTINGS, type Settings } from '#platform';
import { CLOSE_POLICY_VIOLATION } from '../../jsonrpc/jsonrpc.js';
import type { RegistryConnection } from './connection.js';

/** Token lifetime on the socket (DESIGN 8): closed with 1008 once its token has been expired for WS_TOKEN_GRACE_MS. */
@Injectable()
export class TokenExpiry {
  constructor(@Inject(SETTINGS) private readonly settings: Settings) {}

  /** (Re)arms the socket's timer for the token it holds now; call it whenever that token changes. */
  watch(client: WebSocket, connection: RegistryConnection): void {
    clearTimeout(connection.expiryTimer);
    const exp = connection.principal?.claims.exp;
    if (typeof exp !== 'number') return;
    const token = connection.token;
    const delay = Math.max(0, exp * 1000 + this.settings.wsTokenGraceMs - Date.now());
    connection.expiryTimer = setTimeout(() => {
      // A refresh since then re-armed the timer for its own token; this one is stale.
      if (connection.token === token && client.readyState === client.OPEN) {
        client.close(CLOSE_POLICY_VIOLATION, 'Token expired');
      }
    }, delay);
    connection.expiryTimer.unref();
  }
}
