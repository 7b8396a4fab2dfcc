import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { Logger } from '@nestjs/common';
import { WsAdapter } from '@nestjs/platform-ws';
import type { MessageMappingProperties } from '@nestjs/websockets';
import { isObservable, lastValueFrom, type Observable } from 'rxjs';
import type { RawData, WebSocket, WebSocketServer } from 'ws';
import { isDatabaseUnavailable } from '#database';
import { DATABASE_RETRY_AFTER_SEC, ProblemException, reasonOf } from '#platform';
import { BindingRejectedError, type RpcCall } from '#token-binding';
import { invalidParams } from './jsonrpc-validation.pipe.js';
import { refuseUpgrade } from './upgrade-refusal.js';
import {
  CLOSE_POLICY_VIOLATION,
  failure,
  JSONRPC_ERRORS,
  JsonRpcError,
  parseFrame,
  success,
  type JsonRpcId,
  type JsonRpcRequest,
  type JsonRpcResponse,
  UNKNOWN_METHOD,
} from './jsonrpc.js';

type UpgradeListener = (request: IncomingMessage, socket: Duplex, head: Buffer) => void;

/** A ws server Nest registered for a path of the shared HTTP port. */
type PathServer = WebSocketServer & { readonly path: string };

/** ws's handshake checks that fail (it names them only by message): the status and headers to answer with. */
function handshakeRefusal(message: string): { status: number; headers: Record<string, string> } {
  if (message === 'Invalid HTTP method') return { status: 405, headers: { Allow: 'GET' } };
  if (message.includes('Sec-WebSocket-Version')) return { status: 400, headers: { 'Sec-WebSocket-Version': '13, 8' } };
  return { status: 400, headers: {} };
}

function textOf(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}

/**
 * `WsAdapter` speaking JSON-RPC 2.0 instead of Nest's `{event, data}` frames (docs/decisions.md): the method
 * names the `@SubscribeMessage` handler, which receives an `RpcCall` (`@MessageBody('params')` picks the
 * params); its result or its `JsonRpcError`
 * is wrapped in the response envelope. Notifications are never answered. Gateways must rethrow their
 * errors to this adapter (`JsonRpcRethrowFilter`).
 */
export class JsonRpcWsAdapter extends WsAdapter {
  private readonly rpcLogger = new Logger('JsonRpc');
  private readonly upgradeListeners = new Map<Server, UpgradeListener>();

  /** ws's handshake refusals (wrong method, missing key or version) are answered as problem+json too. */
  override create(port: number, options?: Record<string, unknown> & { path?: string }): WebSocketServer {
    const server = super.create(port, options) as WebSocketServer;
    server.on('wsClientError', (error: Error, socket: Duplex, request: IncomingMessage) => {
      const { status, headers } = handshakeRefusal(error.message);
      refuseUpgrade(request, socket, status, error.message, headers);
    });
    return server;
  }

  /**
   * Nest's own upgrade listener destroys the socket of an upgrade request for a path without a gateway (no
   * answer at all); this one answers it 404 problem+json, and hands the others to their ws server.
   */
  protected override ensureHttpServerExists(port: number, httpServer: Server = createServer()): Server | undefined {
    if (this.httpServersRegistry.has(port)) return undefined;
    this.httpServersRegistry.set(port, httpServer);
    const listener: UpgradeListener = (request, socket, head) => this.routeUpgrade(port, request, socket, head);
    httpServer.on('upgrade', listener);
    this.upgradeListeners.set(httpServer, listener);
    return httpServer;
  }

  override async dispose(): Promise<void> {
    for (const [server, listener] of this.upgradeListeners) server.off('upgrade', listener);
    this.upgradeListeners.clear();
    await super.dispose();
  }

  private routeUpgrade(port: number, request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = request.url ?? '/';
    const query = url.indexOf('?');
    const pathname = query === -1 ? url : url.slice(0, query);
    const servers = (this.wsServersRegistry.get(port) ?? []) as PathServer[];
    const server = servers.find((candidate) => candidate.path === pathname);
    if (server === undefined) {
      refuseUpgrade(request, socket, 404, 'There is no WebSocket endpoint at this path');
      return;
    }
    server.handleUpgrade(request, socket, head, (client) => server.emit('connection', client, request));
  }

  override bindMessageHandlers(
    client: WebSocket,
    handlers: MessageMappingProperties[],
    _transform: (data: unknown) => Observable<unknown>,
  ): void {
    const methods = new Map<string, MessageMappingProperties>();
    for (const handler of handlers) methods.set(String(handler.message), handler);
    client.on('message', (data: RawData, isBinary: boolean) => {
      void this.dispatch(client, methods, data, isBinary);
    });
  }

  private async dispatch(
    client: WebSocket,
    methods: ReadonlyMap<string, MessageMappingProperties>,
    data: RawData,
    isBinary: boolean,
  ): Promise<void> {
    // Frames still arriving after the server started closing (a rejection) are not served.
    if (client.readyState !== client.OPEN) return;
    if (isBinary) {
      this.send(
        client,
        failure(null, { ...JSONRPC_ERRORS.invalidRequest, data: { detail: 'only text frames are accepted' } }),
      );
      return;
    }
    const parsed = parseFrame(textOf(data));
    if (!parsed.ok) {
      this.send(client, parsed.reply);
      return;
    }
    const { request, notification } = parsed;
    const id: JsonRpcId = request.id ?? null;
    // An unknown method goes to the gateway's UNKNOWN_METHOD handler when it has one, behind its guards.
    const handler = methods.get(request.method) ?? methods.get(UNKNOWN_METHOD);
    if (handler === undefined) {
      if (!notification) this.send(client, failure(id, JSONRPC_ERRORS.methodNotFound));
      return;
    }
    try {
      const result = await this.invoke(handler, request);
      if (!notification) this.send(client, success(id, result ?? null));
    } catch (error) {
      const rpcError = this.toJsonRpcError(error, request.method);
      if (!notification) this.send(client, failure(id, rpcError.toObject()));
      const close = rpcError.closeAfterReply;
      if (close !== undefined && client.readyState === client.OPEN) client.close(close.code, close.reason);
    }
  }

  private async invoke(handler: MessageMappingProperties, request: JsonRpcRequest): Promise<unknown> {
    // The handler's data is the call, not bare params: guards put the verified caller on it (per call).
    const call: RpcCall = { method: request.method, params: request.params };
    const returned: unknown = await handler.callback(call, request.method);
    return isObservable(returned) ? lastValueFrom(returned, { defaultValue: null }) : returned;
  }

  private toJsonRpcError(error: unknown, method: string): JsonRpcError {
    if (error instanceof JsonRpcError) return error;
    if (error instanceof BindingRejectedError) {
      return new JsonRpcError(
        JSONRPC_ERRORS.forbidden.code,
        error.sentence,
        { status: 403 },
        error.closesConnection ? { code: CLOSE_POLICY_VIOLATION, reason: error.sentence } : undefined,
      );
    }
    if (isDatabaseUnavailable(error)) {
      this.rpcLogger.warn({ method, reason: reasonOf(error) }, 'database unavailable');
      return new JsonRpcError(JSONRPC_ERRORS.unavailable.code, JSONRPC_ERRORS.unavailable.message, {
        status: 503,
        retryAfterSec: DATABASE_RETRY_AFTER_SEC,
      });
    }
    // The app's global HTTP validation pipe, should it ever see params: still -32602 with the fields.
    if (error instanceof ProblemException && error.getStatus() === 400) return invalidParams(error.extras.errors ?? []);
    // Internals never reach the client; the log line names the method, never the params (they may hold a token).
    this.rpcLogger.error({ err: error, method }, 'JSON-RPC handler failed');
    return new JsonRpcError(JSONRPC_ERRORS.internalError.code, JSONRPC_ERRORS.internalError.message);
  }

  private send(client: WebSocket, response: JsonRpcResponse): void {
    if (client.readyState !== client.OPEN) return;
    client.send(JSON.stringify(response));
  }
}
