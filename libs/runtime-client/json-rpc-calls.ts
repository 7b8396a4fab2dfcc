import { WebSocket } from 'ws';
import type { Pending } from './client-types.js';
import { RuntimeRequestError } from './config-reader.js';

/** A JSON-RPC answer from the controller (a notification carries `method` instead of `id`). */
export interface JsonRpcMessage {
  readonly id?: unknown;
  readonly method?: unknown;
  readonly params?: unknown;
  readonly result?: unknown;
  readonly error?: { code: number; message: string; data?: { status?: number } };
}

/** The client's calls in flight on its controller socket, by id, until their answer or the socket's end. */
export class JsonRpcCalls {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();

  send(socket: WebSocket | undefined, method: string, params: Record<string, unknown>): Promise<unknown> {
    if (socket === undefined || socket.readyState !== WebSocket.OPEN) {
      return Promise.reject(new RuntimeRequestError(0, 'not connected to the controller'));
    }
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  /** Settles the call `message` answers, if any: its result, or RuntimeRequestError with the error's status. */
  settle(message: JsonRpcMessage): void {
    if (typeof message.id !== 'number') return;
    const pending = this.pending.get(message.id);
    if (pending === undefined) return;
    this.pending.delete(message.id);
    if (message.error !== undefined) {
      pending.reject(
        new RuntimeRequestError(message.error.data?.status ?? 0, `${message.error.code} ${message.error.message}`),
      );
    } else {
      pending.resolve(message.result);
    }
  }

  rejectAll(error: Error): void {
    for (const pending of this.pending.values()) pending.reject(error);
    this.pending.clear();
  }
}
