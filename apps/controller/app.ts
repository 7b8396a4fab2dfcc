import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHttpApp } from '#platform';
import { ControllerModule, type ControllerOptions } from './controller.module.js';
import { JsonRpcWsAdapter } from './jsonrpc/jsonrpc-ws.adapter.js';

/** The controller app (not yet listening): HTTP on Fastify plus the JSON-RPC WebSocket on the same port. */
export async function createControllerApp(options: ControllerOptions): Promise<NestFastifyApplication> {
  const app = await createHttpApp(ControllerModule.forRoot(options));
  app.useWebSocketAdapter(new JsonRpcWsAdapter(app));
  return app;
}
