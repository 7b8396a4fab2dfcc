import { Inject, Injectable } from '@nestjs/common';
import type { WebSocket } from 'ws';
import { endAt, SETTINGS, type Settings } from '#platform';
import { CLOSE_POLICY_VIOLATION } from '../../jsonrpc/jsonrpc.js';
import type { RegistryConnection } from './connection.js';

/** Token lifetime on the socket (DESIGN 8): closed with 1008 once its token has been expired for WS_TOKEN_GRACE_MS. */
@Injectable()
export class TokenExpiry {
  constructor(@Inject(SETTINGS) private readonly settings: Settings) {}

  /** (Re)arms the socket's deadline for the token it holds now; call it whenever that token changes. */
  watch(client: WebSocket, connection: RegistryConnection): void {
    connection.expiry?.cancel();
    connection.expiry = undefined;
    const exp = connection.principal?.claims.exp;
    if (typeof exp !== 'number') return;
    const token = connection.token;
    // `endAt`, not setTimeout: a token valid for more than 24.8 days would otherwise close the socket at once.
    connection.expiry = endAt(exp * 1000 + this.settings.wsTokenGraceMs, () => {
      // A refresh since then re-armed the deadline for its own token; this one is stale.
      if (connection.token === token && client.readyState === client.OPEN) {
        client.close(CLOSE_POLICY_VIOLATION, 'Token expired');
      }
    });
  }
}
