import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { Logger } from '@nestjs/common';
import { WsAdapter } from '@nestjs/platform-ws';
import type { MessageMappingProperties } from '@nestjs/websockets';
import { isObservable, lastValueFrom, type Observable } from 'rxjs';
import type { RawData, WebSocket, WebSocketServer } from 'ws';
import { DATABASE_RETRY_AFTER_SEC, isDatabaseUnavailable, ProblemException, reasonOf } from '#platform';
import { BindingRejectedError, type Principal, type RpcCall } from '#token-binding';
import { invalidParams } from './jsonrpc-validation.pipe.js';
import { refuseUnavailable, refuseUpgrade } from './upgrade-refusal.js';
import {
  CLOSE_POLICY_VIOLATION,
  failure,
  INVALID_FRAME,
  isReservedMethod,
  JSONRPC_ERRORS,
  JsonRpcError,
  parseBinaryFrame,
  parseFrame,
  success,
  type JsonRpcId,
  type JsonRpcResponse,
  type ParsedFrame,
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

/** A call that failed, as `fail` answers or logs it. */
interface Failed {
  readonly method: string;
  readonly id: JsonRpcId;
  readonly notification: boolean;
  /** The verified caller, when the token guard got that far. */
  readonly caller?: Principal | undefined;
}

/** What a notification's refusal line keeps of the error's data: field errors and the detail, never values. */
interface NotificationErrorData {
  readonly errors?: unknown;
  readonly detail?: unknown;
}

const methodNotFound = (): JsonRpcError =>
  new JsonRpcError(JSONRPC_ERRORS.methodNotFound.code, JSONRPC_ERRORS.methodNotFound.message);

function textOf(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}

/**
 * `WsAdapter` speaking JSON-RPC 2.0 instead of Nest's `{event, data}` frames (docs/decisions.md): the method
 * names the `@SubscribeMessage` handler, which receives an `RpcCall` (`@MessageBody('params')` picks the
 * params); its result or its `JsonRpcError`
 * is wrapped in the response envelope. Notifications are never answered (their failures are logged).
 * Gateways must rethrow their errors to this adapter (`JsonRpcRethrowFilter`).
 */
export class JsonRpcWsAdapter extends WsAdapter {
  private readonly rpcLogger = new Logger('JsonRpc');
  private readonly upgradeListeners = new Map<Server, UpgradeListener>();
  /** Set when shutdown closes the ws servers: ws would answer a bare 503 and reset the socket. */
  private closing = false;

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

  override close(server: unknown): Promise<void> {
    this.closing = true;
    return super.close(server);
  }

  // Our upgrade listeners stay until the HTTP server closes: meanwhile they answer 503 with Retry-After.
  override async dispose(): Promise<void> {
    this.closing = true;
    await super.dispose();
  }

  private routeUpgrade(port: number, request: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (this.closing) {
      refuseUnavailable(request, 'This controller is shutting down; retry, another replica may answer');
      return;
    }
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
    // The last notification of this socket (it waited for everything before it) and the requests since.
    let lastNotification: Promise<void> = Promise.resolve();
    const requestsSince = new Set<Promise<void>>();
    client.on('message', (data: RawData, isBinary: boolean) => {
      const text = textOf(data);
      const frame = isBinary ? parseBinaryFrame(text) : parseFrame(text);
      // A notification acts after every frame sent before it (an update right behind its registration), and
      // every frame after the notifications sent before it (a lookup sees the update it follows); requests
      // are otherwise served concurrently, their answers matched by id.
      const earlier = frame.notification ? [lastNotification, ...requestsSince] : [lastNotification];
      const served = Promise.allSettled(earlier)
        .then(() => this.dispatch(client, methods, frame))
        .catch((error: unknown) => this.rpcLogger.error({ err: error }, 'JSON-RPC frame failed'));
      if (frame.notification) {
        lastNotification = served;
        requestsSince.clear();
      } else {
        requestsSince.add(served);
        void served.finally(() => requestsSince.delete(served));
      }
    });
  }

  private async dispatch(
    client: WebSocket,
    methods: ReadonlyMap<string, MessageMappingProperties>,
    frame: ParsedFrame,
  ): Promise<void> {
    // Frames still arriving after the server started closing (a rejection) are not served.
    if (client.readyState !== client.OPEN) return;
    if (!frame.ok) {
      await this.refuseFrame(client, methods, frame);
      return;
    }
    const { request, notification } = frame;
    const id: JsonRpcId = request.id ?? null;
    // An unknown (or reserved) method goes to the gateway's UNKNOWN_METHOD handler when it has one, behind its guards.
    const named = isReservedMethod(request.method) ? undefined : methods.get(request.method);
    const handler = named ?? methods.get(UNKNOWN_METHOD);
    if (handler === undefined) {
      this.fail(client, { method: request.method, id, notification }, methodNotFound());
      return;
    }
    const call: RpcCall = { method: request.method, params: request.params };
    try {
      const result = await this.invoke(handler, call);
      if (!notification) this.send(client, success(id, result ?? null));
    } catch (error) {
      const failed = { method: request.method, id, notification, caller: call.principal };
      this.fail(client, failed, this.toJsonRpcError(error, request.method));
    }
  }

  /**
   * A frame that is not a valid request: the gateway's INVALID_FRAME handler judges the socket first (a
   * socket without a verified token is closed 1008, DESIGN 8), then the frame's own error is answered,
   * unless it is a notification.
   */
  private async refuseFrame(
    client: WebSocket,
    methods: ReadonlyMap<string, MessageMappingProperties>,
    frame: Extract<ParsedFrame, { ok: false }>,
  ): Promise<void> {
    const call: RpcCall = { method: INVALID_FRAME, params: {} };
    const failed = () => ({
      method: INVALID_FRAME,
      id: frame.reply.id,
      notification: frame.notification,
      caller: call.principal,
    });
    const gate = methods.get(INVALID_FRAME);
    try {
      if (gate !== undefined) await this.invoke(gate, call);
    } catch (error) {
      this.fail(client, failed(), this.toJsonRpcError(error, INVALID_FRAME));
      return;
    }
    const { error } = frame.reply;
    this.fail(client, failed(), new JsonRpcError(error.code, error.message, error.data));
  }

  /**
   * Answers a request's error, or logs a notification's (never answered, DESIGN 8). A refused notification
   * leaves the socket open unless the socket has no valid token (-32001): then it closes 1008 all the same.
   */
  private fail(client: WebSocket, failed: Failed, error: JsonRpcError): void {
    if (failed.notification) this.ignored(failed, error);
    else this.send(client, failure(failed.id, error.toObject()));
    const keepsOpen = failed.notification && error.code !== JSONRPC_ERRORS.unauthorized.code;
    const close = keepsOpen ? undefined : error.closeAfterReply;
    if (close !== undefined && client.readyState === client.OPEN) client.close(close.code, close.reason);
  }

  /** One line per notification not served; never its params (they may hold a token), the token's sid at most. */
  private ignored(failed: Failed, error: JsonRpcError): void {
    const sid = failed.caller?.claims.sid;
    const data = (typeof error.data === 'object' && error.data !== null ? error.data : {}) as NotificationErrorData;
    const line = {
      method: failed.method,
      code: error.code,
      reason: error.message,
      ...(typeof sid === 'string' ? { tokenSid: sid } : {}),
      ...(data.errors === undefined ? {} : { errors: data.errors }),
      ...(data.detail === undefined ? {} : { detail: data.detail }),
    };
    // An upstream runtime sends notifications Bindery has no use for (`log`): noted, not warned about.
    if (error.code === JSONRPC_ERRORS.methodNotFound.code) this.rpcLogger.log(line, 'notification ignored');
    else this.rpcLogger.warn(line, 'notification refused');
  }

  private async invoke(handler: MessageMappingProperties, call: RpcCall): Promise<unknown> {
    // The handler's data is the call, not bare params: guards put the verified caller on it (per call).
    const returned: unknown = await handler.callback(call, call.method);
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
