import { operatorPrincipal } from '#token-binding';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { describeRuntimeEvent, RuntimeClient, RuntimeTokenError, type RuntimeClientEvent } from '#runtime-client';
import { ClientsService } from '../../apps/api/token-issuer/clients.service.js';
import { listenApi, unique, type ListeningApi } from '../support/api.js';
import { waitFor } from '../support/wait.js';
import { freePort, startBuilt, type Spawned } from '../support/processes.js';
import { ISSUER } from '../support/tokens.js';
import { startIssuerWorld, type IssuerWorld } from './support.js';

/**
 * DESIGN 11 against the real processes: the api with its built-in issuer (in-process, listening) and the
 * built controller reading the api's JWKS, both trusting only the issuer's keys. No part of Bindery is mocked.
 */
const host = unique('rc-host');
const serviceId = unique('rc-svc');
let world: IssuerWorld;

beforeAll(async () => {
  world = await startIssuerWorld(host, serviceId);
  // The service's configuration, written as an operator would.
  await world.putLayer({ serviceId, envTag: 'prod' }, { 'server.port': 8443 });
}, 60_000);

afterAll(() => world?.close());

const options = (overrides: Record<string, unknown> = {}) => ({
  tokenEndpoint: `${world.api.url}/oauth2/token`,
  clientId: world.clientId,
  clientSecret: world.secret,
  apiUrl: world.api.url,
  controllerUrl: world.controllerUrl,
  host,
  serviceId,
  envTag: 'prod',
  instance: { address: '10.3.0.1', port: 9000, protocol: 'http' as const },
  maxBackoffMs: 500,
  ...overrides,
});

const configRequests = (): number =>
  world.api.logs.lines.filter((l) =>
    String((l.req as { url?: string } | undefined)?.url ?? '').startsWith('/config-server'),
  ).length;

describe('a misconfigured runtime stops during token setup', () => {
  it.each([
    ['sid', { serviceId: 'another-service' }],
    ['host', { host: 'another-host' }],
  ] as const)(
    'a client configured for another %s: refused by the library, no request to either server',
    async (claim, change) => {
      const before = configRequests();
      const error = await RuntimeClient.create(options(change)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(RuntimeTokenError);
      expect((error as RuntimeTokenError).claim).toBe(claim);
      expect((error as Error).message).toContain(claim);
      expect(configRequests()).toBe(before);
      expect(await world.table.byService('serviceId' in change ? change.serviceId : serviceId)).toEqual([]);
    },
  );

  it('a client asking for an env it may not use stops at the token endpoint, before any other request', async () => {
    // The client may not ask for "dev": the issuer refuses, and the library never gets a token to use.
    const error = await RuntimeClient.create(options({ envTag: 'dev' })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RuntimeTokenError);
    expect(await world.table.byService(serviceId)).toEqual([]);
  });
});

describe('a correct runtime', () => {
  it('reads its config, registers, re-registers after a controller restart, and deregisters on close', async () => {
    const events: RuntimeClientEvent[] = [];
    const client = await RuntimeClient.create(options({ onEvent: (e: RuntimeClientEvent) => events.push(e) }));
    expect(await client.config()).toEqual({ 'server.port': 8443 });
    // A second read is answered from the ETag cache (304).
    expect(await client.config()).toEqual({ 'server.port': 8443 });
    const id = await client.register();
    expect((await world.table.byId(id))?.status).toBe('connected');

    world.controller().child.kill('SIGTERM');
    expect(await world.controller().exit()).toBe(0);
    expect((await world.table.byId(id))?.status).toBe('disconnected');
    await world.restartController();
    await waitFor(() => events.filter((e) => e.type === 'registered').length >= 2, 'the re-registration', 20_000);
    expect(client.instanceId).toBe(id);
    expect((await world.table.byId(id))?.status).toBe('connected');

    // What the runtime's log says: one disconnect, each failed attempt's cause, then that it reconnected.
    const lines = events.map(describeRuntimeEvent);
    expect(events.filter((e) => e.type === 'disconnected')).toHaveLength(1);
    const attempts = events.filter((e) => e.type === 'reconnecting').length;
    const failures = events.filter((e) => e.type === 'error');
    expect(failures).toHaveLength(attempts - 1);
    for (const failure of failures) expect(describeRuntimeEvent(failure)).toMatch(/^reconnect failed: .*ECONNREFUSED/);
    expect(lines.at(-1)).toMatch(
      new RegExp(`^reconnected after ${attempts} attempts? \\([\\d.]+ s without a connection\\); registered as ${id}$`),
    );

    await client.close();
    await waitFor(async () => (await world.table.byId(id))?.status === 'deregistered', 'the deregistration');
  }, 60_000);
});

describe('subscribe()', () => {
  it('gets the node set now and on every change, and again after the client had to reconnect', async () => {
    const sets: string[][] = [];
    const watcher = await RuntimeClient.create(options({ instance: { address: '10.3.1.1', port: 9001 } }));
    await watcher.register();
    const subscription = await watcher.subscribe(
      serviceId,
      (result) => sets.push(result.nodes.map((n) => `${String(n.address)}:${String(n.port)}`)),
      { envTag: 'prod' },
    );
    expect(sets).toEqual([['10.3.1.1:9001']]);
    const runtime = await RuntimeClient.create(options({ instance: { address: '10.3.1.2', port: 9002 } }));
    await runtime.register();
    await waitFor(() => sets.length === 2, 'the new node', 2000);
    expect(sets[1]).toEqual(['10.3.1.1:9001', '10.3.1.2:9002']);

    // The controller restarts: both reconnect and register again; the watcher subscribes again by itself.
    world.controller().child.kill('SIGTERM');
    expect(await world.controller().exit()).toBe(0);
    await world.restartController();
    await waitFor(
      () => sets.length >= 3 && (sets.at(-1)?.length ?? 0) === 2,
      'the set after the reconnect with both nodes',
      20_000,
    );
    const seen = sets.length;
    await runtime.close();
    await waitFor(() => sets.length > seen && sets.at(-1)?.length === 1, 'the closed node to go', 2000);
    expect(sets.at(-1)).toEqual(['10.3.1.1:9001']);
    await subscription.unsubscribe();
    await watcher.close();
  }, 60_000);
});

describe('token lifetimes on the socket (DESIGN 8)', () => {
  let shortApi: ListeningApi;
  let strictController: Spawned;
  let strictPort: number;

  beforeAll(async () => {
    // Tokens of 2 s and a grace of 1.5 s: without session/refresh the socket would be closed within 4 s.
    shortApi = await listenApi({ ...world.env, TOKEN_TTL_SEC: '2' });
    strictPort = await freePort();
    strictController = await startBuilt('apps/controller/main.js', strictPort, {
      JWT_JWKS_FILE: '',
      JWT_JWKS_URI: `${shortApi.url}/.well-known/jwks.json`,
      JWT_ISSUER: ISSUER,
      CONTROLLER_PORT: String(strictPort),
      CONTROLLER_HOST_ID: host,
      WS_TOKEN_GRACE_MS: '1500',
    });
  }, 60_000);

  afterAll(async () => {
    strictController?.child.kill('SIGKILL');
    await shortApi?.close();
  });

  it('the client refreshes before expiry and stays registered on one socket across several lifetimes', async () => {
    const events: RuntimeClientEvent[] = [];
    const client = await RuntimeClient.create(
      options({
        tokenEndpoint: `${shortApi.url}/oauth2/token`,
        apiUrl: shortApi.url,
        controllerUrl: `ws://127.0.0.1:${strictPort}`,
        onEvent: (e: RuntimeClientEvent) => events.push(e),
      }),
    );
    const id = await client.register();
    await waitFor(() => events.filter((e) => e.type === 'refreshed').length >= 4, 'four refreshes', 20_000);
    const exps = events.flatMap((e) => (e.type === 'refreshed' ? [e.exp] : []));
    // Each refresh carried a newly issued token with a later expiry.
    expect([...exps].sort((a, b) => a - b)).toEqual(exps);
    expect(new Set(exps).size).toBe(exps.length);
    expect(events.filter((e) => e.type === 'disconnected' || e.type === 'registered').map((e) => e.type)).toEqual([
      'registered',
    ]);
    expect((await world.table.byId(id))?.status).toBe('connected');
    await client.close();
    await waitFor(async () => (await world.table.byId(id))?.status === 'deregistered', 'the deregistration');
  }, 60_000);

  it('a secret rotated under a running client: each failed renewal names invalid_client (401)', async () => {
    const operator = operatorPrincipal('test');
    const clients = shortApi.app.get(ClientsService);
    const own = await clients.create(operator, { host, sid: serviceId, envs: ['prod'], scopes: ['portal.r'] });
    const events: RuntimeClientEvent[] = [];
    const client = await RuntimeClient.create(
      options({
        clientId: own.clientId,
        clientSecret: own.clientSecret,
        tokenEndpoint: `${shortApi.url}/oauth2/token`,
        apiUrl: shortApi.url,
        controllerUrl: `ws://127.0.0.1:${strictPort}`,
        instance: { address: '10.3.2.1', port: 9003 },
        onEvent: (e: RuntimeClientEvent) => events.push(e),
      }),
    );
    await client.register();
    await clients.rotate(operator, own.clientId, 0);
    await waitFor(() => events.some((e) => e.type === 'error'), 'a failed renewal', 10_000);
    expect(describeRuntimeEvent(events.find((e) => e.type === 'error') as RuntimeClientEvent)).toBe(
      'token renewal failed: token endpoint refused: invalid_client (401)',
    );
    await client.close();
  }, 30_000);
});
