import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createHttpApp } from '#platform';
import { ControllerModule, type ControllerOptions } from './controller.module.js';
import { JsonRpcWsAdapter } from './jsonrpc/jsonrpc-ws.adapter.js';
import { CONTROLLER_OPENAPI } from './openapi.js';

/**
 * The controller app (not yet listening): HTTP on Fastify plus the JSON-RPC WebSocket on the same port,
 * with the OpenAPI page at `/docs`.
 */
export async function createControllerApp(options: ControllerOptions): Promise<NestFastifyApplication> {
  const app = await createHttpApp(ControllerModule.forRoot(options), {
    openApi: CONTROLLER_OPENAPI,
    trustProxy: options.settings.trustProxy,
  });
  app.useWebSocketAdapter(new JsonRpcWsAdapter(app));
  return app;
}
