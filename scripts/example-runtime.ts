import 'reflect-metadata';
import {
  causeOf,
  describeConfigChange,
  describeRuntimeEvent,
  RuntimeClient,
  type RuntimeClientEvent,
} from '#runtime-client';
import { answerHelp } from './usage.js';

/**
 * `npm run example:runtime`: a small runtime using libs/runtime-client against `npm start`. Paste the
 * `export CLIENT_ID=... CLIENT_SECRET=...` line npm start printed first. `--once` registers, prints and
 * closes; without it the runtime stays registered until Ctrl-C.
 */
answerHelp(`usage: npm run example:runtime [-- --once]
A runtime using libs/runtime-client against npm start: gets a token as the client CLIENT_ID (default
petstore-dev) with CLIENT_SECRET, prints its configuration, registers 127.0.0.1:9000 (version 1.0.0) with
the controller, updates its version to 1.0.1 (service/update_metadata), prints the controller's entry and
stays registered (reconnecting as needed) until Ctrl-C, printing each change of its configuration (pushed by
the controller, or found after a reconnect); --once registers, prints and exits.
Paste npm start's "export CLIENT_ID=... CLIENT_SECRET=..." line first. Also read: API_URL (default
http://localhost:8080), CONTROLLER_URL (ws://localhost:8081), RUNTIME_HOST (dev-host), SERVICE_ID (petstore),
ENV_TAG (dev), PRODUCT_ID and PRODUCT_VERSION (none).`);

/** One line per background event; a refused secret also says what to do about it. */
function report(event: RuntimeClientEvent): string {
  const line = `example:runtime: ${describeRuntimeEvent(event)}`;
  if (event.type === 'error' && /invalid_client/.test(event.error.message)) {
    return `${line} (CLIENT_SECRET is not this client's secret: paste the export line npm start printed)`;
  }
  return line;
}

function fail(error: unknown): never {
  process.stderr.write(`example:runtime: ${causeOf(error)}\n`);
  process.exit(1);
}

const env = process.env;
const clientSecret = env.CLIENT_SECRET;
if (clientSecret === undefined || clientSecret === '') {
  process.stderr.write('example:runtime: set CLIENT_SECRET (and CLIENT_ID) from the line npm start printed\n');
  process.exit(2);
}
const apiUrl = env.API_URL ?? 'http://localhost:8080';
const serviceId = env.SERVICE_ID ?? 'petstore';
const envTag = env.ENV_TAG ?? 'dev';
let registered = false;
const client = await RuntimeClient.create({
  tokenEndpoint: `${apiUrl}/oauth2/token`,
  clientId: env.CLIENT_ID ?? 'petstore-dev',
  clientSecret,
  apiUrl,
  controllerUrl: env.CONTROLLER_URL ?? 'ws://localhost:8081',
  host: env.RUNTIME_HOST ?? 'dev-host',
  serviceId,
  envTag,
  ...(env.PRODUCT_ID && env.PRODUCT_VERSION ? { productId: env.PRODUCT_ID, productVersion: env.PRODUCT_VERSION } : {}),
  instance: { address: '127.0.0.1', port: 9000, protocol: 'http', version: '1.0.0' },
  onEvent: (event) => {
    // The first registration is printed below with the instance id; every later one is a reconnect.
    if (event.type === 'registered' && !registered) return;
    process.stderr.write(`${report(event)}\n`);
  },
}).catch(fail);
// A failure before the runtime is registered is one line naming its cause, never a stack trace.
process.stdout.write(`config: ${JSON.stringify(await client.config().catch(fail))}\n`);
const runtimeInstanceId = await client.register().catch(fail);
process.stdout.write(`runtimeInstanceId: ${runtimeInstanceId}\n`);
registered = true;
// As if 1.0.1 were rolled out in place: the controller hears it as the service/update_metadata notification.
client.updateMetadata({ version: '1.0.1' });
process.stdout.write('metadata updated: version 1.0.0 -> 1.0.1\n');
// The lookup is served after the notification, so it shows what every watcher now sees (a refusal is no failure).
const lookup = await client.lookup(serviceId, { envTag }).catch((error: unknown) => causeOf(error));
const self = typeof lookup === 'string' ? lookup : lookup.nodes.find((n) => n.runtimeInstanceId === runtimeInstanceId);
process.stdout.write(`the controller lists this instance as ${JSON.stringify(self)}\n`);
if (process.argv.includes('--once')) {
  await client.close();
  process.exit(0);
}
await client
  .onConfigChange((change) => process.stdout.write(`example:runtime: ${describeConfigChange(change)}\n`))
  .catch(fail);
process.stdout.write('registered; Ctrl-C deregisters and exits\n');
const stop = (): void => {
  void client.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
