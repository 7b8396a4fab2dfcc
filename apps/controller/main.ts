import 'reflect-metadata';
import { WsAdapter } from '@nestjs/platform-ws';
import { resolveDatabase } from '#database';
import { createHttpApp, runMain } from '#platform';
import { ControllerModule } from './controller.module.js';

runMain('controller', async (settings) => {
  const database = await resolveDatabase(settings);
  const app = await createHttpApp(ControllerModule.forRoot({ settings, databaseUrl: database.url }));
  app.useWebSocketAdapter(new WsAdapter(app));
  await app.listen({ port: settings.controllerPort, host: settings.listenHost });
  return { app, cleanup: database.stop };
});
