import 'reflect-metadata';
import { resolveDatabase } from '#database';
import { createHttpApp, runMain } from '#platform';
import { ApiModule } from './api.module.js';
import { apiHttpOptions } from './openapi.js';

runMain('api', async (settings) => {
  const database = await resolveDatabase(settings);
  const app = await createHttpApp(
    ApiModule.forRoot({ settings, databaseUrl: database.url }),
    apiHttpOptions(settings.trustProxy),
  );
  await app.listen({ port: settings.apiPort, host: settings.listenHost });
  return { app, cleanup: database.stop };
});
