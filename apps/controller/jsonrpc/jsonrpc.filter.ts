import { Catch, type ExceptionFilter } from '@nestjs/common';

/**
 * Nest's default WebSocket filter answers nothing useful over plain `ws` (docs/decisions.md): this one hands
 * every error back to `JsonRpcWsAdapter`, which owns the JSON-RPC error envelope.
 */
@Catch()
export class JsonRpcRethrowFilter implements ExceptionFilter {
  catch(error: unknown): never {
    throw error;
  }
}
