import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, listenApi, unique, type ListeningApi } from '../support/api.js';
import {
  changesOf,
  instanceIdOf,
  RegistryTable,
  RpcClient,
  startController,
  waitFor,
  type TestController,
} from '../support/controller.js';
import { EventReader } from '../support/event-stream.js';
import { callers, token } from '../support/tokens.js';

/**
 * `service/update_metadata` (DESIGN 8, issue 41) across two in-process controller replicas of one host and
 * the api on the same database: the update made through one replica reaches a `discovery/subscribe` watcher
 * on the other, lookups on both, both `/instances` lists and the api's `/registry/changes` stream.
 */
let a: TestController;
let b: TestController;
let api: ListeningApi;
let table: RegistryTable;
const hostId = unique('meta-host');

beforeAll(async () => {
  [a, b] = await Promise.all([
    startController({ CONTROLLER_HOST_ID: hostId }),
    startController({ CONTROLLER_HOST_ID: hostId }),
  ]);
  api = await listenApi();
  table = new RegistryTable();
});

afterAll(async () => {
  await api?.close();
  await a?.close();
  await b?.close();
  await table?.end();
});

async function connect(controller: TestController, serviceId: string): Promise<RpcClient> {
  return RpcClient.connect(controller.wsUrl, { token: await token({ sub: 'rt', sid: serviceId, host: hostId }) });
}

const UPSTREAM_UPDATE = { version: '1.0.1', protocol: 'https', port: 8444, tags: { zone: 'b' } };

describe('service/update_metadata across replicas', () => {
  it('a watcher on replica B gets discovery/changed with the new values; every read shows them', async () => {
    const serviceId = unique('meta');
    const address = '10.41.1.1';
    const runtime = await connect(a, serviceId);
    const id = instanceIdOf(
      await runtime.call('service/register', {
        serviceId,
        version: '1.0.0',
        protocol: 'http',
        address,
        port: 8443,
        tags: { zone: 'a' },
      }),
    );
    const watcher = await connect(b, serviceId);
    const subscribed = await watcher.call('discovery/subscribe', { serviceId });
    const subscriptionId = subscribed.result?.subscriptionId as string;
    expect(subscribed.result?.nodes).toMatchObject([{ runtimeInstanceId: id, version: '1.0.0', port: 8443 }]);
    const admin = await callers.admin();
    const stream = await EventReader.open(`${api.url}/registry/changes`, admin);
    await waitFor(() => stream.events.some((e) => e.event === 'ready'), 'the stream to be ready');
    const changesOfService = () =>
      stream.events.filter((e) => e.event === 'change' && (e.data as { serviceId: string }).serviceId === serviceId);
    const streamedBefore = changesOfService().length;

    // The upstream runtime's frame, as it sends it: a notification, never answered.
    runtime.notify('service/update_metadata', UPSTREAM_UPDATE);

    const expected = { runtimeInstanceId: id, envTag: null, address, ...UPSTREAM_UPDATE };
    await waitFor(() => changesOf(watcher, subscriptionId).length === 1, 'discovery/changed on replica B');
    expect(changesOf(watcher, subscriptionId)[0]).toEqual({
      subscriptionId,
      serviceId,
      envTag: null,
      nodes: [expected],
    });
    await waitFor(() => changesOfService().length > streamedBefore, 'the change on /registry/changes');
    expect(changesOfService().at(-1)?.data).toEqual({ hostId, serviceId });
    stream.close();

    for (const client of [runtime, watcher]) {
      expect((await client.call('discovery/lookup', { serviceId })).result).toEqual({
        serviceId,
        envTag: null,
        nodes: [expected],
      });
    }
    const query = `hostId=${hostId}&serviceId=${serviceId}`;
    const fromApi = await call(api, 'GET', `/registry/instances?${query}`, { token: admin });
    expect(fromApi.statusCode).toBe(200);
    const listed = fromApi.json<{ total: number; instances: Record<string, unknown>[] }>();
    expect(listed).toMatchObject({ total: 1, instances: [{ ...expected, status: 'connected' }] });
    for (const controller of [a, b]) {
      const answer = await fetch(`${controller.httpUrl}/instances?${query}`, {
        headers: { authorization: `Bearer ${admin}` },
      });
      expect(await answer.json()).toEqual(listed);
    }
    expect(await table.byId(id)).toMatchObject({
      version: '1.0.1',
      protocol: 'https',
      port: 8444,
      tags: { zone: 'b' },
      status: 'connected',
    });
    // The watcher heard of this one change only, and the runtime got no answer to its notification.
    expect(changesOf(watcher, subscriptionId)).toHaveLength(1);
    expect(runtime.received.filter((frame) => (frame as { id?: unknown }).id === undefined)).toEqual([]);
    await Promise.all([runtime.close(), watcher.close()]);
  });
});
