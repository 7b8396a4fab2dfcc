import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { migrate } from '#database';
import { unique } from '../support/api.js';
import { WS_PATH } from '../support/controller.js';
import { freePort, startBuilt, type Spawned } from '../support/processes.js';
import { callers } from '../support/tokens.js';
import { productLayer, PushRuntime, serviceLayer, type Layer } from './push-support.js';

/**
 * DESIGN 14 push end to end with real processes on one PostgreSQL: two api processes take admin writes,
 * two controller replicas of one host and a controller of another host hold the runtimes. Each write
 * reaches exactly the runtimes its layer feeds, whichever api made it and whichever replica holds them.
 * "Nobody else" is proven without waiting out a time: each controller hears the writes in commit order and
 * sends each one's frames in one pass, a write's frame due COALESCE_MS after the write, so once a runtime
 * on a controller has the frame of the last write, a round trip on that controller's other sockets brings
 * anything it sent them for an earlier one.
 */
const hostId = unique('push-host');
const otherHostId = unique('push-other');
const apis: { process: Spawned; url: string }[] = [];
const controllers: { process: Spawned; wsUrl: string }[] = [];
let adminToken: string;

async function startApi(): Promise<{ process: Spawned; url: string }> {
  const port = await freePort();
  const process = await startBuilt('apps/api/main.js', port, { API_PORT: String(port), CONTROLLER_HOST_ID: hostId });
  return { process, url: `http://127.0.0.1:${port}` };
}

async function startController(host: string): Promise<{ process: Spawned; wsUrl: string }> {
  const port = await freePort();
  const process = await startBuilt('apps/controller/main.js', port, {
    CONTROLLER_PORT: String(port),
    CONTROLLER_HOST_ID: host,
  });
  return { process, wsUrl: `ws://127.0.0.1:${port}${WS_PATH}` };
}

beforeAll(async () => {
  await migrate(process.env.DATABASE_SESSION_URL || (process.env.DATABASE_URL ?? ''));
  // In the order they were asked for, not the order they became ready: the third is the other host's.
  apis.push(...(await Promise.all([startApi(), startApi()])));
  controllers.push(
    ...(await Promise.all([startController(hostId), startController(hostId), startController(otherHostId)])),
  );
  adminToken = await callers.admin();
}, 90_000);

afterAll(async () => {
  const all = [...apis, ...controllers];
  for (const { process } of all) process.child.kill('SIGKILL');
  await Promise.all(all.map(({ process }) => process.exit()));
});

/** PUT through `api`; resolves once the write (and its notification) committed. */
async function put(api: { url: string }, layer: Layer, properties: Record<string, unknown>): Promise<void> {
  const query = new URLSearchParams();
  for (const key of ['host', 'serviceId', 'productId', 'productVersion', 'envTag'] as const) {
    const value = layer[key];
    if (value !== null) query.set(key, value);
  }
  const response = await fetch(`${api.url}/config-server/admin/properties?${query.toString()}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ properties }),
  });
  expect(response.status).toBe(200);
}

describe('config/changed across api processes and controller replicas', () => {
  it('reaches the runtimes of the changed service and env on either replica, and nobody else', async () => {
    const s = unique('svc');
    const t = unique('svc');
    const product = unique('prod');
    const [c1, c2, c3] = controllers as [(typeof controllers)[0], (typeof controllers)[0], (typeof controllers)[0]];
    const [a1, a2] = apis as [(typeof apis)[0], (typeof apis)[0]];
    const onA = await PushRuntime.start(c1.wsUrl, hostId, [{ serviceId: s, envTag: 'prod' }], 'prod');
    const onB = await PushRuntime.start(c2.wsUrl, hostId, [{ serviceId: s, envTag: 'prod' }], 'prod');
    const otherEnv = await PushRuntime.start(c1.wsUrl, hostId, [{ serviceId: s, envTag: 'dev' }], 'dev');
    const otherService = await PushRuntime.start(c2.wsUrl, hostId, [{ serviceId: t, envTag: 'prod' }], 'prod');
    const otherHost = await PushRuntime.start(c3.wsUrl, otherHostId, [{ serviceId: s, envTag: 'prod' }], 'prod');
    const withProduct = await PushRuntime.start(
      c2.wsUrl,
      hostId,
      [{ serviceId: t, envTag: 'prod', productId: product, productVersion: '1' }],
      'prod',
    );
    const unrelatedProduct = await PushRuntime.start(
      c1.wsUrl,
      hostId,
      [{ serviceId: t, envTag: 'prod', productId: unique('prod'), productVersion: '1' }],
      'prod',
    );
    const everyone = { onA, onB, otherEnv, otherService, otherHost, withProduct, unrelatedProduct };

    // Through the second api: the product's all-env layer; then through the first: the service's prod layer,
    // whose frame on each replica (onA on the first, onB on the second) comes after any for the product's.
    const productWrite = productLayer(hostId, product, '1');
    await put(a2, productWrite, { 'shop.currency': 'EUR' });
    const serviceWrite = serviceLayer(hostId, s, 'prod');
    await put(a1, serviceWrite, { 'server.httpPort': 9443 });
    await Promise.all([onA, onB, withProduct].map((r) => r.waitForChanges(1, 'config/changed')));
    const onFirstTwo = [onA, onB, otherEnv, otherService, withProduct, unrelatedProduct];
    await Promise.all(onFirstTwo.map((r) => r.roundTrip()));

    const frames = (runtimes: Record<string, PushRuntime>) =>
      Object.fromEntries(Object.entries(runtimes).map(([name, r]) => [name, r.arrivals.length]));
    // The other host's controller has no frame due here to wait for: its runtime is checked below.
    expect(frames({ onA, onB, otherEnv, otherService, withProduct, unrelatedProduct })).toEqual({
      onA: 1,
      onB: 1,
      otherEnv: 0,
      otherService: 0,
      withProduct: 1,
      unrelatedProduct: 0,
    });
    for (const runtime of [onA, onB]) {
      expect(runtime.changes[0]?.params).toEqual({
        serviceId: s,
        envTag: 'prod',
        layer: serviceWrite,
        version: expect.any(Number),
      });
    }
    expect(withProduct.changes[0]?.params).toEqual({
      serviceId: t,
      envTag: 'prod',
      layer: productWrite,
      version: expect.any(Number),
    });

    // The same address on the other host reaches only the runtime of that host; a second write of this host's
    // layer after it marks where the first two replicas have sent anything they would have for it.
    const otherWrite = serviceLayer(otherHostId, s, 'prod');
    await put(a2, otherWrite, { 'server.httpPort': 1 });
    await put(a1, serviceWrite, { 'server.httpPort': 9444 });
    await otherHost.waitForChanges(1, 'config/changed on the other host');
    await Promise.all([onA, onB].map((r) => r.waitForChanges(2, 'the second config/changed')));
    await Promise.all(Object.values(everyone).map((r) => r.roundTrip()));
    // Its only frame is the other host's write: one for this host's writes, before it, would be here too.
    expect(otherHost.changes.map((c) => c.params)).toEqual([
      { serviceId: s, envTag: 'prod', layer: otherWrite, version: expect.any(Number) },
    ]);
    expect(frames(everyone)).toEqual({
      onA: 2,
      onB: 2,
      otherEnv: 0,
      otherService: 0,
      otherHost: 1,
      withProduct: 1,
      unrelatedProduct: 0,
    });
    await Promise.all(Object.values(everyone).map((r) => r.close()));
  }, 60_000);
});
