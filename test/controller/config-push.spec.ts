import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ControlSession } from '#database';
import { unique } from '../support/api.js';
import { RegistryTable, RpcClient, startController, waitFor, type TestController } from '../support/controller.js';
import { token } from '../support/tokens.js';
import {
  notifyLayer,
  productLayer,
  PushMarker,
  PushRuntime,
  serviceLayer,
  type Layer,
  type Registration,
} from './push-support.js';

/**
 * DESIGN 14 push on one controller, the api's notification sent by hand: exactly the sockets a layer feeds
 * get one `config/changed`, every other socket nothing. config-push-replicas.spec covers the real processes.
 * "Nothing (more) came" is proven by a marker's change notified after (push-support's PushMarker).
 */
const RESYNC_LINE = 'config layers read again after the listening session reconnected';
let controller: TestController;
let db: RegistryTable;
let marker: PushMarker;

beforeAll(async () => {
  controller = await startController();
  db = new RegistryTable();
  marker = await PushMarker.start(controller.wsUrl, controller.hostId);
});
afterAll(async () => {
  await marker?.close();
  await controller?.close();
  await db?.end();
});

const start = (registrations: readonly Registration[], env?: string, host = controller.hostId) =>
  PushRuntime.start(controller.wsUrl, host, registrations, env);

describe('service/register productId and productVersion', () => {
  it('are optional, go together, and are 1..128 / 1..64 characters without control characters', async () => {
    const serviceId = unique('prodreg');
    const client = await RpcClient.connect(controller.wsUrl, {
      token: await token({ sub: 'rt', sid: serviceId, host: controller.hostId }),
    });
    const refusals: [Record<string, unknown>, string, string][] = [
      [{ productId: 'shop' }, 'productVersion', 'productVersion is required'],
      [{ productVersion: '1.0' }, 'productId', 'productId is required'],
      [{ productId: 'shop', productVersion: '   ' }, 'productVersion', 'productVersion is required'],
      [
        { productId: 'x'.repeat(129), productVersion: '1' },
        'productId',
        'productId must be shorter than or equal to 128 characters',
      ],
      [
        { productId: 'shop', productVersion: '1'.repeat(65) },
        'productVersion',
        'productVersion must be shorter than or equal to 64 characters',
      ],
      [{ productId: 'sh\u0007op', productVersion: '1' }, 'productId', expect.any(String) as unknown as string],
      [{ productId: 7, productVersion: '1' }, 'productId', 'productId must be a string'],
    ];
    for (const [params, field, message] of refusals) {
      const answer = await client.call('service/register', { serviceId, port: 1, address: '10.9.9.9', ...params });
      expect(answer.error).toMatchObject({ code: -32602, data: { status: 400 } });
      expect(answer.error?.data?.errors).toEqual(expect.arrayContaining([{ field, message }]));
    }
    expect((await db.byService(serviceId)).length).toBe(0);
    const ok = await client.call('service/register', {
      serviceId,
      address: '10.9.9.9',
      port: 1,
      productId: ' shop ',
      productVersion: 'x'.repeat(64),
    });
    expect(ok.result).toMatchObject({ status: 'registered' });
    await client.close();
  });
});

describe('config/changed', () => {
  it('reaches exactly the sockets the layer feeds, once each; every other socket gets nothing', async () => {
    const s = unique('push');
    const other = unique('other');
    const host = controller.hostId;
    const product = unique('prod');
    const prod = await start([{ serviceId: s, envTag: 'prod' }], 'prod');
    const dev = await start([{ serviceId: s, envTag: 'dev' }], 'dev');
    const noEnv = await start([{ serviceId: s }]);
    // Two registrations (two ports) the same layers feed, on one socket: one frame per change for both.
    const both = await start(
      [
        { serviceId: s, envTag: 'prod' },
        { serviceId: s, envTag: 'prod' },
      ],
      'prod',
    );
    const otherService = await start([{ serviceId: other, envTag: 'prod' }], 'prod');
    const withProduct = await start(
      [{ serviceId: other, envTag: 'prod', productId: product, productVersion: '1' }],
      'prod',
    );
    const otherVersion = await start(
      [{ serviceId: other, envTag: 'prod', productId: product, productVersion: '2' }],
      'prod',
    );
    const everyone = [prod, dev, noEnv, both, otherService, withProduct, otherVersion];

    const expectOnly = async (layer: Layer, version: number, fed: readonly PushRuntime[]) => {
      const before = new Map(everyone.map((r) => [r, r.arrivals.length]));
      await notifyLayer(db, layer, version);
      await marker.pass(db, everyone);
      for (const runtime of everyone) {
        const frames = runtime.arrivals.slice(before.get(runtime));
        if (!fed.includes(runtime)) {
          expect(frames).toEqual([]);
          continue;
        }
        expect(frames).toHaveLength(1);
        expect(frames[0]?.frame).toMatchObject({
          jsonrpc: '2.0',
          method: 'config/changed',
          params: { layer, version },
        });
        expect(Object.keys(frames[0]?.frame ?? {}).sort()).toEqual(['jsonrpc', 'method', 'params']);
        expect(Object.keys(frames[0]?.frame.params ?? {}).sort()).toEqual(['envTag', 'layer', 'serviceId', 'version']);
      }
    };

    await expectOnly(serviceLayer(host, s, 'prod'), 3, [prod, both]);
    await expectOnly(serviceLayer(host, s, 'dev'), 4, [dev]);
    await expectOnly(serviceLayer(host, s), 5, [prod, dev, noEnv, both]);
    await expectOnly(productLayer(host, product, '1'), 1, [withProduct]);
    await expectOnly(productLayer(host, product, '1', 'prod'), 2, [withProduct]);
    await expectOnly(serviceLayer(host, other, 'dev'), 1, []);
    await expectOnly(serviceLayer('another-host', s, 'prod'), 9, []);
    await expectOnly(serviceLayer(host, unique('nobody')), 1, []);
    expect(prod.changes[0]?.params).toMatchObject({ serviceId: s, envTag: 'prod' });
    expect(noEnv.changes[0]?.params).toMatchObject({ serviceId: s, envTag: null });
    expect(withProduct.changes[0]?.params).toMatchObject({ serviceId: other, envTag: 'prod' });
    await Promise.all(everyone.map((r) => r.close()));
  });

  it('coalesces changes of one layer into one frame with the latest version, and sends a version once', async () => {
    const s = unique('coal');
    const runtime = await start([{ serviceId: s }]);
    const layer = serviceLayer(controller.hostId, s);
    // One transaction: the three arrive together, well within one coalescing window however loaded the machine.
    await db.query(
      `select pg_notify('bindery_config', $1), pg_notify('bindery_config', $2), pg_notify('bindery_config', $3)`,
      [2, 3, 4].map((version) => JSON.stringify({ ...layer, version })),
    );
    await marker.pass(db, [runtime]);
    expect(runtime.changes.map((c) => c.params.version)).toEqual([4]);
    // The same version again (e.g. seen by a resync first) sends nothing; a new one does.
    await notifyLayer(db, layer, 4);
    // Its frame, had it been due, went out before the marker's (and so before version 5 could coalesce with it).
    await marker.pass(db, [runtime]);
    expect(runtime.changes.map((c) => c.params.version)).toEqual([4]);
    await notifyLayer(db, layer, 5);
    await marker.pass(db, [runtime]);
    expect(runtime.changes.map((c) => c.params.version)).toEqual([4, 5]);
    await runtime.close();
  });

  it('ignores malformed notifications and a socket that registered nothing hears nothing', async () => {
    const s = unique('bad');
    const runtime = await start([{ serviceId: s }]);
    const idle = await RpcClient.connect(controller.wsUrl, {
      token: await token({ sub: 'rt', sid: s, host: controller.hostId }),
    });
    for (const payload of [
      'not json',
      '[]',
      JSON.stringify({ host: 1 }),
      JSON.stringify({ host: controller.hostId, serviceId: s, version: 'x' }),
    ]) {
      await db.query(`select pg_notify('bindery_config', $1)`, [payload]);
    }
    await notifyLayer(db, serviceLayer(controller.hostId, s), 2);
    await marker.pass(db, [runtime, idle]);
    expect(runtime.changes.map((c) => c.params.version)).toEqual([2]);
    expect(idle.received).toEqual([]);
    await Promise.all([runtime.close(), idle.close()]);
  });

  it('after the listening session reconnects, layers changed or removed meanwhile are pushed', async () => {
    const s = unique('resync');
    const host = controller.hostId;
    const insert = (envTag: string | null, version: number) =>
      db.query(`insert into config_layer (host, service_id, env_tag, aggregate_version) values ($1, $2, $3, $4)`, [
        host,
        s,
        envTag,
        version,
      ]);
    await insert(null, 1);
    await insert('prod', 1);
    // The controller knows these versions (notified), as after the api's writes.
    await notifyLayer(db, serviceLayer(host, s), 1);
    await notifyLayer(db, serviceLayer(host, s, 'prod'), 1);
    // Their frames went to nobody: they are out before the runtimes below register.
    await marker.pass(db);
    const runtime = await start([{ serviceId: s, envTag: 'prod' }], 'prod');
    const devRuntime = await start([{ serviceId: s, envTag: 'dev' }], 'dev');
    const bystander = await start([{ serviceId: unique('by'), envTag: 'prod' }], 'prod');
    // Changes whose notifications were lost (none is sent here), then the listening session drops.
    await db.query(
      `update config_layer set aggregate_version = 2 where host = $1 and service_id = $2 and env_tag is null`,
      [host, s],
    );
    await db.query(`delete from config_layer where host = $1 and service_id = $2 and env_tag = 'prod'`, [host, s]);
    await insert('dev', 1);
    const session = controller.app.get(ControlSession);
    const { rows } = await session.query<{ pid: number }>('select pg_backend_pid() as pid');
    const resyncs = () => controller.logs.lines.filter((l) => l.msg === RESYNC_LINE).length;
    const resyncsBefore = resyncs();
    await db.query('select pg_terminate_backend($1)', [rows[0]?.pid]);
    // The line comes once the resync has scheduled every frame it found: a marker notified after goes out last.
    await waitFor(() => resyncs() > resyncsBefore, 'the resync after the reconnect', 20_000);
    await marker.pass(db, [runtime, devRuntime, bystander]);
    expect(runtime.changes.map((c) => c.params)).toEqual(
      expect.arrayContaining([
        { serviceId: s, envTag: 'prod', layer: serviceLayer(host, s), version: 2 },
        { serviceId: s, envTag: 'prod', layer: serviceLayer(host, s, 'prod'), version: null },
      ]),
    );
    expect(runtime.changes).toHaveLength(2);
    expect(devRuntime.changes.map((c) => c.params)).toEqual(
      expect.arrayContaining([
        { serviceId: s, envTag: 'dev', layer: serviceLayer(host, s), version: 2 },
        { serviceId: s, envTag: 'dev', layer: serviceLayer(host, s, 'dev'), version: 1 },
      ]),
    );
    expect(devRuntime.changes).toHaveLength(2);
    expect(bystander.arrivals).toEqual([]);
    expect(session.connected).toBe(true);
    await db.query('delete from config_layer where host = $1 and service_id = $2', [host, s]);
    await Promise.all([runtime.close(), devRuntime.close(), bystander.close()]);
  }, 30_000);
});
