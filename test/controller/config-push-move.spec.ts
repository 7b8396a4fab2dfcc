import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { unique } from '../support/api.js';
import {
  instanceIdOf,
  RegistryTable,
  RpcClient,
  startController,
  type RpcResponse,
  type TestController,
} from '../support/controller.js';
import { token } from '../support/tokens.js';
import { notifyLayer, serviceLayer } from './push-support.js';

/**
 * DESIGN 8 Ownership and 14 (issue 38, item 9): a registration re-registered from a new socket moved there,
 * so `config/changed` goes to the new socket alone. "Nothing arrived" is proven without waiting out a time:
 * a change's frames are all sent in one pass, so once one socket has its frame, a round trip on another
 * socket is answered after any frame that socket was sent for that change.
 */
let controller: TestController;
let db: RegistryTable;

beforeAll(async () => {
  controller = await startController();
  db = new RegistryTable();
});
afterAll(async () => {
  await controller?.close();
  await db?.end();
});

const pushes = (client: RpcClient): RpcResponse[] =>
  (client.received as RpcResponse[]).filter((frame) => frame.method === 'config/changed');

/** Waits for the `count`-th `config/changed` on `client`. */
const nthPush = (client: RpcClient, count: number, what: string): Promise<RpcResponse> =>
  client.response((frame) => frame.method === 'config/changed' && pushes(client).indexOf(frame) === count - 1, what);

/** A request answered by the server: every frame sent to `client` before it arrives first. */
async function roundTrip(client: RpcClient): Promise<void> {
  expect((await client.call('no/such-method')).error?.code).toBe(-32601);
}

describe('config/changed after a registration moved to another socket', () => {
  it('goes to the socket that registered last, once; never to the socket it left, open or closed', async () => {
    const s = unique('moved');
    const host = controller.hostId;
    const layer = serviceLayer(host, s);
    const runtimeToken = await token({ sub: 'rt', sid: s, host });
    const connect = () => RpcClient.connect(controller.wsUrl, { token: runtimeToken });
    const [a, b, witness] = [await connect(), await connect(), await connect()];
    const params = { serviceId: s, address: '10.9.1.1', port: 1 };

    const id = instanceIdOf(await a.call('service/register', params));
    expect(instanceIdOf(await b.call('service/register', params))).toBe(id);
    // The witness holds a registration of its own (another port) that every change of the layer feeds.
    const witnessId = instanceIdOf(await witness.call('service/register', { ...params, port: 2 }));
    expect(witnessId).not.toBe(id);

    await notifyLayer(db, layer, 7);
    const first = await nthPush(b, 1, "B's config/changed");
    expect(first.params).toEqual({ serviceId: s, envTag: null, layer, version: 7 });
    await nthPush(witness, 1, "the witness's config/changed");
    await roundTrip(a);
    await roundTrip(b);
    expect(pushes(a)).toEqual([]);
    expect(pushes(b)).toHaveLength(1);

    // The socket it left owns it no more: its deregister is refused and its close leaves it connected.
    expect((await a.call('service/deregister', { runtimeInstanceId: id })).error?.code).toBe(-32003);
    await a.close();
    await controller.quiesce();
    expect((await db.byId(id))?.status).toBe('connected');
    await notifyLayer(db, layer, 8);
    expect((await nthPush(b, 2, "B's second config/changed")).params).toMatchObject({ version: 8 });

    // Deregistered, B is told nothing of the next change; the witness, still registered, is.
    expect((await b.call('service/deregister', { runtimeInstanceId: id })).result).toMatchObject({
      status: 'deregistered',
    });
    await notifyLayer(db, layer, 9);
    expect((await nthPush(witness, 3, "the witness's third config/changed")).params).toMatchObject({ version: 9 });
    await roundTrip(b);
    expect(pushes(b).map((frame) => frame.params?.version)).toEqual([7, 8]);
    expect(pushes(witness).map((frame) => frame.params?.version)).toEqual([7, 8, 9]);
    await Promise.all([b.close(), witness.close()]);
  });

  it('a registration moved back and forth between two sockets is pushed to its last owner only', async () => {
    const s = unique('pingpong');
    const layer = serviceLayer(controller.hostId, s);
    const runtimeToken = await token({ sub: 'rt', sid: s, host: controller.hostId });
    const [a, b] = [
      await RpcClient.connect(controller.wsUrl, { token: runtimeToken }),
      await RpcClient.connect(controller.wsUrl, { token: runtimeToken }),
    ];
    const params = { serviceId: s, address: '10.9.1.2', port: 1 };
    for (const client of [a, b, a, b, a]) instanceIdOf(await client.call('service/register', params));

    await notifyLayer(db, layer, 3);
    expect((await nthPush(a, 1, "A's config/changed")).params).toMatchObject({ version: 3 });
    await roundTrip(b);
    expect(pushes(b)).toEqual([]);
    expect(pushes(a)).toHaveLength(1);
    await Promise.all([a.close(), b.close()]);
  });
});
