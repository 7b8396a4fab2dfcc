import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import {
  causeOf,
  describeConfigChange,
  describeRuntimeEvent,
  RuntimeClient,
  type LookupResult,
  type RuntimeClientEvent,
} from '#runtime-client';
import { count, parseCommandLine, refuseUsage, type Command } from './usage.js';

/**
 * `npm run example:runtime`: a small runtime using libs/runtime-client against `npm start`. Paste the
 * `export CLIENT_ID=... CLIENT_SECRET=...` line npm start printed first. `--once` registers, prints and
 * closes; without it the runtime stays registered until Ctrl-C; `--watch SERVICE` also prints every change
 * of that service's node set (`discovery/subscribe`, `discovery/changed`).
 */

/** The port it asks for first; a second run finds it taken and takes a free one. */
const DEFAULT_PORT = 9000;

const command = {
  name: 'example:runtime',
  usage: `usage: npm run example:runtime [-- [--once | --watch SERVICE] [--port PORT]]
A runtime using libs/runtime-client against npm start: gets a token as the client CLIENT_ID (default
petstore-dev) with CLIENT_SECRET, prints its configuration, listens on 127.0.0.1:${DEFAULT_PORT} and registers that
address (version 1.0.0) with the controller, updates its version to 1.0.1 (service/update_metadata), prints
the controller's entry and stays registered (reconnecting as needed) until Ctrl-C, printing each change of its
configuration (pushed by the controller, or found after a reconnect).
  --once           registers, prints and exits
  --watch SERVICE  also subscribes to SERVICE's instances in its env (discovery/subscribe) and prints the
                   whole node set now and on every change (discovery/changed), e.g. --watch petstore
  --port PORT      the port to listen on and register (default ${DEFAULT_PORT})
Each run is an instance of its own: a registration is identified by host, service, env, address and port,
so when ${DEFAULT_PORT} is taken (by another example:runtime) it listens on a free port and says so, rather than
take over the other run's registration.
Paste npm start's "export CLIENT_ID=... CLIENT_SECRET=..." line first. Also read: API_URL (default
http://localhost:8080), CONTROLLER_URL (ws://localhost:8081), RUNTIME_HOST (dev-host), SERVICE_ID (petstore),
ENV_TAG (dev), PRODUCT_ID and PRODUCT_VERSION (none).`,
  options: {
    once: { type: 'boolean' },
    watch: { type: 'string' },
    port: { type: 'string' },
  },
} as const satisfies Command;

const { values } = parseCommandLine(command);
if (values.once === true && values.watch !== undefined) refuseUsage(command, '--once and --watch go separately');
const port = values.port === undefined ? undefined : Number(values.port);
if (port !== undefined && !(Number.isInteger(port) && port >= 1 && port <= 65535)) {
  refuseUsage(command, '--port must be a port number (1..65535)');
}

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

/** Listens on 127.0.0.1:`port` (0: any free port); undefined when the port is taken. */
function listen(server: Server, at: number): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException): void => {
      if (error.code === 'EADDRINUSE') resolve(undefined);
      else reject(error);
    };
    server.once('error', onError);
    server.listen(at, '127.0.0.1', () => {
      server.off('error', onError);
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : at);
    });
  });
}

/** `petstore (env dev): 2 nodes: 127.0.0.1:9000 1.0.1, 127.0.0.1:9002 1.0.0`. */
function describeNodes({ serviceId, envTag, nodes }: LookupResult): string {
  const list = nodes.map((node) => {
    const at =
      typeof node.address === 'string' ? `${node.address}:${String(node.port)}` : String(node.runtimeInstanceId);
    return typeof node.version === 'string' ? `${at} ${node.version}` : at;
  });
  return `${serviceId} (env ${envTag ?? 'any'}): ${count(nodes.length, 'node')}${list.length === 0 ? '' : `: ${list.join(', ')}`}`;
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

// The address it registers is one it holds: a second run cannot listen there, so it never registers the
// same identity and never takes over the first run's registration.
let runtimeInstanceId = '';
const server = createServer((_request, response) => {
  response.setHeader('content-type', 'application/json');
  response.end(JSON.stringify({ serviceId, envTag, runtimeInstanceId }));
});
const listening = await listen(server, port ?? DEFAULT_PORT).catch(fail);
let instancePort: number;
if (listening !== undefined) {
  instancePort = listening;
  process.stdout.write(`instance: 127.0.0.1:${instancePort}\n`);
} else if (port !== undefined) {
  fail(`127.0.0.1:${port} is in use: choose another --port`);
} else {
  instancePort = (await listen(server, 0).catch(fail)) ?? fail('no free port on 127.0.0.1');
  process.stdout.write(
    `instance: 127.0.0.1:${instancePort} (port ${DEFAULT_PORT} is taken, by another example:runtime?)\n`,
  );
}

let registered = false;
/** Once it deregisters, its own disconnect is no news. */
let closing = false;
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
  instance: { address: '127.0.0.1', port: instancePort, protocol: 'http', version: '1.0.0' },
  onEvent: (event) => {
    // The first registration is printed below with the instance id; every later one is a reconnect.
    if ((event.type === 'registered' && !registered) || closing) return;
    process.stderr.write(`${report(event)}\n`);
  },
}).catch(fail);
// A failure before the runtime is registered is one line naming its cause, never a stack trace.
process.stdout.write(`config: ${JSON.stringify(await client.config().catch(fail))}\n`);
runtimeInstanceId = await client.register().catch(fail);
process.stdout.write(`runtimeInstanceId: ${runtimeInstanceId}\n`);
registered = true;
// As if 1.0.1 were rolled out in place: the controller hears it as the service/update_metadata notification.
client.updateMetadata({ version: '1.0.1' });
process.stdout.write('metadata updated: version 1.0.0 -> 1.0.1\n');
// The lookup is served after the notification, so it shows what every watcher now sees (a refusal is no failure).
const lookup = await client.lookup(serviceId, { envTag }).catch((error: unknown) => causeOf(error));
const self = typeof lookup === 'string' ? lookup : lookup.nodes.find((n) => n.runtimeInstanceId === runtimeInstanceId);
process.stdout.write(`the controller lists this instance as ${JSON.stringify(self)}\n`);
if (values.once === true) {
  closing = true;
  await client.close();
  server.close();
  process.exit(0);
}
await client
  .onConfigChange((change) => process.stdout.write(`example:runtime: ${describeConfigChange(change)}\n`))
  .catch(fail);
if (values.watch !== undefined) {
  // The node set now, then the whole new set on every change, on any controller replica (and after a reconnect).
  let first = true;
  await client
    .subscribe(
      values.watch,
      (result) => {
        process.stdout.write(
          `example:runtime: ${first ? 'watching' : 'discovery/changed:'} ${describeNodes(result)}\n`,
        );
        first = false;
      },
      { envTag },
    )
    .catch(fail);
}
process.stdout.write('registered; Ctrl-C deregisters and exits\n');
const stop = (): void => {
  closing = true;
  server.close();
  void client.close().then(() => process.exit(0));
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
