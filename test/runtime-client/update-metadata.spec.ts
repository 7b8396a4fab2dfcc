import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RuntimeClient, type RuntimeClientEvent } from '#runtime-client';
import { unique } from '../support/api.js';
import { waitFor } from '../support/controller.js';
import { run } from '../support/processes.js';
import { startIssuerWorld, type IssuerWorld } from './support.js';

/**
 * `updateMetadata()` of libs/runtime-client (DESIGN 8 and 11, issue 41) against the real processes: the api
 * with its issuer and the built controller. The update reaches the registry as the notification, and a
 * reconnect never brings the old values back.
 */
const host = unique('um-host');
const serviceId = unique('um-svc');
let world: IssuerWorld;

beforeAll(async () => {
  world = await startIssuerWorld(host, serviceId);
}, 60_000);

afterAll(() => world?.close());

const options = (address: string, events: RuntimeClientEvent[] = []) => ({
  tokenEndpoint: `${world.api.url}/oauth2/token`,
  clientId: world.clientId,
  clientSecret: world.secret,
  apiUrl: world.api.url,
  controllerUrl: world.controllerUrl,
  host,
  serviceId,
  envTag: 'prod',
  instance: { address, port: 9000, protocol: 'http' as const, version: '1.0.0', tags: { zone: 'a' } },
  maxBackoffMs: 500,
  onEvent: (event: RuntimeClientEvent) => events.push(event),
});

const UPDATED = { version: '1.0.1', port: 9001, tags: { zone: 'b' } };

describe('updateMetadata()', () => {
  it('reaches the controller, and the values stay after the controller restarts and the client re-registers', async () => {
    const events: RuntimeClientEvent[] = [];
    const client = await RuntimeClient.create(options('10.4.1.1', events));
    const id = await client.register();
    client.updateMetadata(UPDATED);
    await waitFor(async () => (await world.table.byId(id))?.version === '1.0.1', 'the update in the registry');
    expect(await world.table.byId(id)).toMatchObject({ port: 9001, tags: { zone: 'b' }, protocol: 'http' });

    world.controller().child.kill('SIGTERM');
    expect(await world.controller().exit()).toBe(0);
    expect((await world.table.byId(id))?.status).toBe('disconnected');
    await world.restartController();
    await waitFor(() => events.filter((e) => e.type === 'registered').length === 2, 'the re-registration', 20_000);
    // The same registration, connected again with the updated values; nothing registered with the old ones.
    expect(client.instanceId).toBe(id);
    const rows = (await world.table.byService(serviceId)).filter((row) => row.address === '10.4.1.1');
    expect(rows).toEqual([
      expect.objectContaining({ runtime_instance_id: id, status: 'connected', version: '1.0.1', port: 9001 }),
    ]);
    expect(rows[0]?.tags).toEqual({ zone: 'b' });
    await client.close();
  }, 60_000);

  it('before register(): remembered, and the registration carries it', async () => {
    const client = await RuntimeClient.create(options('10.4.1.2'));
    client.updateMetadata({ version: '2.0.0', protocol: 'https' });
    const id = await client.register();
    expect(await world.table.byId(id)).toMatchObject({ version: '2.0.0', protocol: 'https', port: 9000 });
    await client.close();
  });

  it('an invalid value throws and changes nothing', async () => {
    const client = await RuntimeClient.create(options('10.4.1.3'));
    const id = await client.register();
    expect(() => client.updateMetadata({ port: 0 })).toThrow('updateMetadata: port must be an integer from 1 to 65535');
    client.updateMetadata({ version: '1.0.9' });
    await waitFor(async () => (await world.table.byId(id))?.version === '1.0.9', 'the valid update');
    expect((await world.table.byId(id))?.port).toBe(9000);
    await client.close();
  });

  it('npm run example:runtime shows it: registered as 1.0.0, then listed by the controller as 1.0.1', async () => {
    const example = run('scripts/example-runtime.js', ['--once'], {
      CLIENT_ID: world.clientId,
      CLIENT_SECRET: world.secret,
      API_URL: world.api.url,
      CONTROLLER_URL: world.controllerUrl,
      RUNTIME_HOST: host,
      SERVICE_ID: serviceId,
      ENV_TAG: 'prod',
    });
    expect(await example.exit()).toBe(0);
    expect(example.output()).toContain('metadata updated: version 1.0.0 -> 1.0.1\n');
    const listed = /^the controller lists this instance as (.*)$/m.exec(example.output())?.[1] ?? 'null';
    // The address it listens on: 9000, or a free port when another example:runtime holds 9000.
    const port = Number(/^instance: 127\.0\.0\.1:(\d+)/m.exec(example.output())?.[1]);
    expect(JSON.parse(listed)).toMatchObject({ address: '127.0.0.1', port, protocol: 'http', version: '1.0.1' });
  }, 30_000);
});
