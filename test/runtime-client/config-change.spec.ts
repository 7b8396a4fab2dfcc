import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { migrate } from '#database';
import { describeConfigChange, RuntimeClient, type ConfigChange, type RuntimeClientEvent } from '#runtime-client';
import { ClientsService } from '../../apps/api/token-issuer/clients.service.js';
import { listenApi, unique, type ListeningApi } from '../support/api.js';
import { RegistryTable, waitFor } from '../support/controller.js';
import { freePort, startBuilt, type Spawned } from '../support/processes.js';
import { ISSUER, writeIssuerKeyFile } from '../support/tokens.js';

/**
 * DESIGN 14 `onConfigChange` against the real processes: the api with its issuer and the built controller.
 * Layers are written through the admin API; the client is told by `config/changed`, re-reads with its ETag
 * and calls back with the keys that changed, and after a reconnect it reads again by itself.
 */
const keys = writeIssuerKeyFile();
const host = unique('cc-host');
const serviceId = unique('cc-svc');
const productId = unique('cc-prod');
let api: ListeningApi;
let controller: Spawned;
let controllerPort: number;
let table: RegistryTable;
let secret: string;
let clientId: string;
let adminToken: string;

const issuerEnv = { JWT_JWKS_FILE: '', TOKEN_ISSUER_KEY_FILE: keys.file, JWT_ISSUER: ISSUER };

function startControllerProcess(): Promise<Spawned> {
  return startBuilt('apps/controller/main.js', controllerPort, {
    JWT_JWKS_FILE: '',
    JWT_JWKS_URI: `${api.url}/.well-known/jwks.json`,
    JWT_ISSUER: ISSUER,
    CONTROLLER_PORT: String(controllerPort),
    CONTROLLER_HOST_ID: host,
  });
}

/** Replaces one layer's properties through the admin API, as an operator does. */
async function putLayer(address: Record<string, string>, properties: Record<string, unknown>): Promise<void> {
  const query = new URLSearchParams({ host, ...address });
  const put = await fetch(`${api.url}/config-server/admin/properties?${query.toString()}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ properties }),
  });
  expect(put.status).toBe(200);
}

beforeAll(async () => {
  await migrate(process.env.DATABASE_URL ?? '');
  api = await listenApi(issuerEnv);
  controllerPort = await freePort();
  controller = await startControllerProcess();
  table = new RegistryTable();
  const operator = { subject: 'test', scopes: new Set<string>(), host: null, claims: {} };
  const clients = api.app.get(ClientsService);
  const created = await clients.create(operator, { host, sid: serviceId, envs: ['prod'], scopes: ['portal.r'] });
  clientId = created.clientId;
  secret = created.clientSecret;
  const admin = await clients.create(operator, { scopes: ['portal.admin'], envs: [] });
  const basic = Buffer.from(`${admin.clientId}:${admin.clientSecret}`).toString('base64');
  const issued = await fetch(`${api.url}/oauth2/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials' }).toString(),
  });
  adminToken = ((await issued.json()) as { access_token: string }).access_token;
  await putLayer({ serviceId, envTag: 'prod' }, { 'server.httpPort': 8443, 'server.name': 'shop' });
}, 60_000);

afterAll(async () => {
  controller?.child.kill('SIGKILL');
  await api?.close();
  await table?.end();
});

const options = (events: RuntimeClientEvent[] = []) => ({
  tokenEndpoint: `${api.url}/oauth2/token`,
  clientId,
  clientSecret: secret,
  apiUrl: api.url,
  controllerUrl: `ws://127.0.0.1:${controllerPort}`,
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

    await putLayer({ serviceId, envTag: 'prod' }, { 'server.httpPort': 9443, 'server.tls': true });
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
    await putLayer({ productId, productVersion: '1.0' }, { 'server.httpPort': 1, 'shop.currency': 'EUR' });
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

    // A layer that does not feed it (another env) changes nothing it reads: no callback.
    await putLayer({ serviceId, envTag: 'dev' }, { 'server.httpPort': 7 });
    await new Promise((r) => setTimeout(r, 1500));
    expect(changes).toHaveLength(2);
    await client.close();
  }, 60_000);

  it('a change made while the client was disconnected is read after it reconnects', async () => {
    const events: RuntimeClientEvent[] = [];
    const client = await RuntimeClient.create(options(events));
    await client.register();
    const changes: ConfigChange[] = [];
    await client.onConfigChange((change) => changes.push(change));
    const before = (await client.config())['server.httpPort'];

    controller.child.kill('SIGTERM');
    expect(await controller.exit()).toBe(0);
    await waitFor(() => events.some((e) => e.type === 'disconnected'), 'the client to see the socket close');
    await putLayer({ serviceId, envTag: 'prod' }, { 'server.httpPort': 10443, 'server.tls': true });
    expect(changes).toEqual([]);
    controller = await startControllerProcess();
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
