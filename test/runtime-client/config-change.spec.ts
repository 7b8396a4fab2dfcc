import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { describeConfigChange, RuntimeClient, type ConfigChange, type RuntimeClientEvent } from '#runtime-client';
import { unique } from '../support/api.js';
import { waitFor } from '../support/wait.js';
import { startIssuerWorld, type IssuerWorld } from './support.js';

/**
 * DESIGN 14 `onConfigChange` against the real processes: the api with its issuer and the built controller.
 * Layers are written through the admin API; the client is told by `config/changed`, re-reads with its ETag
 * and calls back with the keys that changed, and after a reconnect it reads again by itself.
 */
const host = unique('cc-host');
const serviceId = unique('cc-svc');
const productId = unique('cc-prod');
let world: IssuerWorld;

beforeAll(async () => {
  world = await startIssuerWorld(host, serviceId);
  await world.putLayer({ serviceId, envTag: 'prod' }, { 'server.httpPort': 8443, 'server.name': 'shop' });
}, 60_000);

afterAll(() => world?.close());

const options = (events: RuntimeClientEvent[] = []) => ({
  tokenEndpoint: `${world.api.url}/oauth2/token`,
  clientId: world.clientId,
  clientSecret: world.secret,
  apiUrl: world.api.url,
  controllerUrl: world.controllerUrl,
  host,
  serviceId,
  envTag: 'prod',
  productId,
  productVersion: '1.0',
  instance: { address: '10.4.0.1', port: 9000, protocol: 'http' as const },
  maxBackoffMs: 500,
  onEvent: (event: RuntimeClientEvent) => events.push(event),
});

describe('onConfigChange', () => {
  it('calls back with the new values and the keys that changed, for the service and for its product', async () => {
    const client = await RuntimeClient.create(options());
    await client.register();
    const changes: ConfigChange[] = [];
    await client.onConfigChange((change) => changes.push(change));

    await world.putLayer({ serviceId, envTag: 'prod' }, { 'server.httpPort': 9443, 'server.tls': true });
    await waitFor(() => changes.length === 1, 'the pushed change', 10_000);
    expect(changes[0]).toEqual({
      values: { 'server.httpPort': 9443, 'server.tls': true },
      added: ['server.tls'],
      changed: ['server.httpPort'],
      removed: ['server.name'],
      previous: { 'server.httpPort': 8443, 'server.name': 'shop' },
      cause: {
        type: 'pushed',
        layer: { host, serviceId, productId: null, productVersion: null, envTag: 'prod' },
        version: expect.any(Number),
      },
    });
    expect(describeConfigChange(changes[0])).toMatch(
      /^config changed \(version \d+\): server\.httpPort 8443 → 9443, server\.tls added \(true\), server\.name removed$/,
    );

    // A product layer feeds it too (registered with productId/productVersion); the service layer still wins.
    await world.putLayer({ productId, productVersion: '1.0' }, { 'server.httpPort': 1, 'shop.currency': 'EUR' });
    await waitFor(() => changes.length === 2, 'the product layer change', 10_000);
    expect(changes[1]).toMatchObject({
      added: ['shop.currency'],
      changed: [],
      removed: [],
      // The cause is the notification that prompted the re-read; a service-layer frame still on its way may
      // be the one that reads the product change (CI saw it), so only the host is certain here.
      cause: { type: 'pushed', layer: { host } },
    });
    expect(changes[1]?.values).toEqual({ 'server.httpPort': 9443, 'server.tls': true, 'shop.currency': 'EUR' });

    // A layer that does not feed it (another env) changes nothing it reads: no callback. A change of a layer
    // that feeds it, written after, is told after anything the first could have caused (commit order).
    await world.putLayer({ serviceId, envTag: 'dev' }, { 'server.httpPort': 7 });
    await world.putLayer(
      { productId, productVersion: '1.0' },
      { 'server.httpPort': 1, 'shop.currency': 'EUR', 'shop.marker': true },
    );
    await waitFor(() => changes.length >= 3, 'the change written after it', 10_000);
    expect(changes).toHaveLength(3);
    expect(changes[2]).toMatchObject({ added: ['shop.marker'], changed: [], removed: [] });
    await client.close();
  }, 60_000);

  it('a change made while the client was disconnected is read after it reconnects', async () => {
    const events: RuntimeClientEvent[] = [];
    const client = await RuntimeClient.create(options(events));
    await client.register();
    const changes: ConfigChange[] = [];
    await client.onConfigChange((change) => changes.push(change));
    const before = (await client.config())['server.httpPort'];

    world.controller().child.kill('SIGTERM');
    expect(await world.controller().exit()).toBe(0);
    await waitFor(() => events.some((e) => e.type === 'disconnected'), 'the client to see the socket close');
    await world.putLayer({ serviceId, envTag: 'prod' }, { 'server.httpPort': 10443, 'server.tls': true });
    expect(changes).toEqual([]);
    await world.restartController();
    await waitFor(() => changes.length === 1, 'the change read after the reconnect', 20_000);
    expect(changes[0]).toMatchObject({
      changed: ['server.httpPort'],
      previous: { 'server.httpPort': before },
      cause: { type: 'reconnected' },
    });
    expect(changes[0]?.values['server.httpPort']).toBe(10443);
    expect(describeConfigChange(changes[0])).toBe(
      `config changed while disconnected: server.httpPort ${String(before)} → 10443`,
    );
    await client.close();
  }, 60_000);
});
