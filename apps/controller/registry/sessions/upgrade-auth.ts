import type { IncomingMessage } from 'node:http';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { VerifyClientCallbackAsync, WebSocket, WebSocketServer } from 'ws';
import { SETTINGS, type Settings } from '#platform';
import { bearerCredential, KeySourceUnavailableError, TokenVerifier } from '#token-binding';
import { CLOSE_POLICY_VIOLATION } from '../../jsonrpc/jsonrpc.js';
import { refuseInvalidToken, refuseUnavailable } from '../../jsonrpc/upgrade-refusal.js';
import { Connections, REGISTRY_LOG_CONTEXT, type RegistryConnection, type VerifiedToken } from './connection.js';

/** ws's verifyClient callback; only ever called to accept: refusals are written by `refuseUpgrade`. */
type Accept = (verified: true) => void;

/**
 * Who may hold a registry socket (DESIGN 8): the connection caps, the upgrade's bearer token (verified by the
 * same `TokenVerifier` as HTTP), and the deadline for a socket without one to present one.
 */
@Injectable()
export class UpgradeAuth {
  private readonly logger = new Logger(REGISTRY_LOG_CONTEXT);
  /** Bearer tokens verified at the upgrade, picked up when the socket opens. */
  private readonly verified = new WeakMap<IncomingMessage, VerifiedToken>();

  constructor(
    private readonly connections: Connections,
    private readonly verifier: TokenVerifier,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  /** Installs the upgrade check on the gateway's server: the gateway decorator cannot reach injected services. */
  attach(server: WebSocketServer): void {
    const verifyClient: VerifyClientCallbackAsync = (info, accept) => {
      void this.verifyUpgrade(info.req, accept);
    };
    server.options.verifyClient = verifyClient;
  }

  /** The token verified at the upgrade of `request`, if it carried one. */
  tokenOf(request: IncomingMessage): VerifiedToken | undefined {
    return this.verified.get(request);
  }

  /** A socket without a verified token must present one within WS_AUTH_TIMEOUT_MS, or it gives its slot back. */
  requireTokenSoon(client: WebSocket, connection: RegistryConnection): void {
    if (connection.authenticated) return;
    const timer = setTimeout(() => {
      if (!connection.authenticated && client.readyState === client.OPEN) {
        client.close(CLOSE_POLICY_VIOLATION, 'Authentication timeout');
      }
    }, this.settings.wsAuthTimeoutMs);
    timer.unref();
    client.once('close', () => clearTimeout(timer));
  }

  private async verifyUpgrade(request: IncomingMessage, accept: Accept): Promise<void> {
    if (this.connections.stopping) return refuseUnavailable(request, 'The controller is shutting down');
    if (this.connections.size >= this.settings.wsMaxConnections) return this.full(request, 'WS_MAX_CONNECTIONS');
    const credential = bearerCredential(request.headers.authorization);
    // Without Bearer credentials (no header, another scheme: RFC 6750 3.1) the upgrade proceeds;
    // `service/register` then needs `params.jwt` (DESIGN 8).
    if (credential.kind === 'none') {
      // Sockets without a token have their own cap, so they can never use up the slots of registered ones.
      if (this.connections.unauthenticated >= this.settings.wsMaxUnauthenticated) {
        return this.full(request, 'WS_MAX_UNAUTHENTICATED');
      }
      return accept(true);
    }
    if (credential.kind === 'malformed') return refuseInvalidToken(request);
    const { token } = credential;
    let verified: VerifiedToken;
    try {
      verified = { token, ...(await this.verifier.verifyKeyed(token)) };
    } catch (error) {
      if (error instanceof KeySourceUnavailableError) return refuseUnavailable(request, 'Token keys are unavailable');
      return refuseInvalidToken(request);
    }
    this.verified.set(request, verified);
    accept(true);
  }

  private full(request: IncomingMessage, limit: string): void {
    this.logger.warn({ limit }, 'WebSocket upgrade refused: connection limit reached');
    refuseUnavailable(request, `The controller holds as many sockets as ${limit} allows`);
  }
}
