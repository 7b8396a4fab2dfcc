import 'reflect-metadata';
import { RuntimeClient } from '#runtime-client';

/**
 * `npm run example:runtime`: a small runtime using libs/runtime-client against `npm start`. Paste the
 * `export CLIENT_ID=... CLIENT_SECRET=...` line npm start printed first. `--once` registers, prints and
 * closes; without it the runtime stays registered until Ctrl-C.
 */
const env = process.env;
const clientSecret = env.CLIENT_SECRET;
if (clientSecret === undefined || clientSecret === '') {
  process.stderr.write('example:runtime: set CLIENT_SECRET (and CLIENT_ID) from the line npm start printed\n');
  process.exit(2);
}
const apiUrl = env.API_URL ?? 'http://localhost:8080';
const client = await RuntimeClient.create({
  tokenEndpoint: `${apiUrl}/oauth2/token`,
  clientId: env.CLIENT_ID ?? 'petstore-dev',
  clientSecret,
  apiUrl,
  controllerUrl: env.CONTROLLER_URL ?? 'ws://localhost:8081',
  host: env.RUNTIME_HOST ?? 'dev-host',
  serviceId: env.SERVICE_ID ?? 'petstore',
  envTag: env.ENV_TAG ?? 'dev',
  instance: { address: '127.0.0.1', port: 9000, protocol: 'http', version: '1.0.0' },
  onEvent: (event) => {
    if (event.type !== 'registered') process.stderr.write(`example:runtime: ${event.type}\n`);
  },
}).catch((error: unknown) => {
  process.stderr.write(`example:runtime: ${(error as Error).message}\n`);
  process.exit(1);
});
process.stdout.write(`config: ${JSON.stringify(await client.config())}\n`);
process.stdout.write(`runtimeInstanceId: ${await client.register()}\n`);
if (process.argv.includes('--once')) {
  await client.close();
  process.exit(0);
}
process.stdout.write('registered; Ctrl-C deregisters and exits\n');
const stop = (): void => {
  void client.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
