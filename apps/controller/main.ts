import 'reflect-metadata';
import { resolveDatabase } from '#database';
import { runMain } from '#platform';
import { createControllerApp } from './app.js';

runMain('controller', async (settings) => {
  const database = await resolveDatabase(settings);
  const app = await createControllerApp({ settings, databaseUrl: database.url });
  await app.listen({ port: settings.controllerPort, host: settings.listenHost });
  return { app, cleanup: database.stop };
});
