import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, listenApi, sqlDuring, unique, type ListeningApi } from '../support/api.js';
import { instanceIdOf, RpcClient, startController, waitFor, type TestController } from '../support/controller.js';
import { withTimeout } from '../support/wait.js';
import { EventReader, type ServerEvent } from '../support/event-stream.js';
import { callers, token } from '../support/tokens.js';

describe('the registry on the api (DESIGN 13)', () => {
  let api: ListeningApi;
  let controller: TestController;

  beforeAll(async () => {
    controller = await startController();
    api = await listenApi();
  });

  afterAll(async () => {
    await api?.close();
    await controller?.close();
  });

  async function runtime(serviceId: string): Promise<{ client: RpcClient; id: string }> {
    const jwt = await token({ sub: 'rt', sid: serviceId, host: controller.hostId });
    const client = await RpcClient.connect(controller.wsUrl, { token: jwt });
    const response = await client.call('service/register', { serviceId, address: '10.0.0.9', port: 8080 });
    return { client, id: instanceIdOf(response) };
  }

  it('GET /registry/instances answers the same items as the controller /instances', async () => {
    const serviceId = unique('reg');
    const { client, id } = await runtime(serviceId);
    const admin = await callers.admin();
    const query = `hostId=${controller.hostId}&serviceId=${serviceId}`;
    const fromApi = await call(api, 'GET', `/registry/instances?${query}`, { token: admin });
    expect(fromApi.statusCode).toBe(200);
    const body = fromApi.json<{ total: number; instances: { runtimeInstanceId: string; status: string }[] }>();
    expect(body.total).toBe(1);
    expect(body.instances[0]).toMatchObject({ runtimeInstanceId: id, serviceId, status: 'connected', port: 8080 });
    const fromController = await fetch(`${controller.httpUrl}/instances?${query}`, {
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(await fromController.json()).toEqual(body);
    client.socket.close();
    await client.closed;
  });

  it('checks paging and filters at the edge (400)', async () => {
    const admin = await callers.admin();
    const response = await call(api, 'GET', '/registry/instances?status=asleep&colour=red', { token: admin });
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toContain('application/problem+json');
  });

  it.each([
    ['no token', undefined, 401],
    ['a reader', 'reader', 403],
    ['a writer', 'writer', 403],
  ] as const)('refuses %s on both routes before any SQL', async (_name, who, status) => {
    const jwt = who === undefined ? undefined : await callers[who]('h1');
    for (const url of ['/registry/instances', '/registry/changes']) {
      const { result, queries } = await sqlDuring(() => call(api, 'GET', url, jwt === undefined ? {} : { token: jwt }));
      expect(result.statusCode).toBe(status);
      expect(queries).toBe(0);
    }
  });

  it('GET /registry/changes streams a change on a registration and on a disconnect', async () => {
    const reader = await EventReader.open(`${api.url}/registry/changes`, await callers.admin());
    expect(reader.response.statusCode).toBe(200);
    expect(reader.response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(reader.response.headers['cache-control']).toBe('no-store');
    await waitFor(() => reader.events.some((e) => e.event === 'ready'), 'the ready event');

    const serviceId = unique('live');
    const ours = (): ServerEvent[] =>
      reader.events.filter((e) => e.event === 'change' && (e.data as { serviceId: string }).serviceId === serviceId);
    const { client } = await runtime(serviceId);
    await waitFor(() => ours().length >= 1, 'the registration as a change event');
    expect(ours()[0]?.data).toEqual({ hostId: controller.hostId, serviceId });

    const seen = ours().length;
    client.socket.close();
    await waitFor(() => ours().length > seen, 'the disconnect as a change event');
    reader.close();
  });

  it('ends open streams when the api stops, so shutdown does not wait for them', async () => {
    const second = await listenApi();
    const reader = await EventReader.open(`${second.url}/registry/changes`, await callers.admin());
    await waitFor(() => reader.events.length > 0, 'the ready event');
    // An open stream would hold the server's close for ever (nothing forces an in-process app's).
    await withTimeout(second.close(), 'the api to close');
    await waitFor(() => reader.ended, 'the stream to end');
    // Ended by the api (its last chunk sent), not cut off with the connection.
    expect(reader.endedCleanlyAt).toBeDefined();
  });

  it('ends a stream with an expired event when its token stops being accepted, and keeps a long-lived one open', async () => {
    // exp plus the verifier's clock tolerance, made 1 s here so the test waits seconds, not the default 30.
    const short = await listenApi({ JWT_CLOCK_TOLERANCE_SEC: '1' });
    try {
      const expiring = await token({ sub: 'root', scope: 'portal.admin' }, { expiresIn: 2 });
      const exp = (JSON.parse(Buffer.from(expiring.split('.')[1] ?? '', 'base64url').toString()) as { exp: number })
        .exp;
      // 40 days: beyond setTimeout's longest delay, which would otherwise fire at once.
      const lasting = await token({ sub: 'root', scope: 'portal.admin' }, { expiresIn: 40 * 86_400 });
      const ending = await EventReader.open(`${short.url}/registry/changes`, expiring);
      const staying = await EventReader.open(`${short.url}/registry/changes`, lasting);
      expect([ending.response.statusCode, staying.response.statusCode]).toEqual([200, 200]);
      await waitFor(() => ending.endedCleanlyAt !== undefined, 'the expiring stream to end', 15_000);
      // Not before the token stopped being accepted: the api ends it then at the earliest, and the end reaches
      // this process later still (on one clock: the api runs here), so no load can make this fail.
      const acceptedUntil = (exp + 1) * 1000;
      expect(ending.endedCleanlyAt).toBeGreaterThanOrEqual(acceptedUntil);
      // Registry changes of parallel test files may arrive meanwhile; the stream opens with ready and ends with expired.
      const kinds = ending.events.map((e) => e.event).filter((kind) => kind !== 'change');
      expect(kinds).toEqual(['ready', 'expired']);
      expect(ending.events.at(-1)?.event).toBe('expired');
      // The same token is refused from then on: a reconnect gets 401, not another stream that ends at once.
      expect((await call(short, 'GET', '/registry/changes', { token: expiring })).statusCode).toBe(401);

      const serviceId = unique('after-exp');
      const { client } = await runtime(serviceId);
      await waitFor(
        () =>
          staying.events.some((e) => e.event === 'change' && (e.data as { serviceId: string }).serviceId === serviceId),
        'a change on the long-lived stream',
      );
      expect(staying.ended).toBe(false);
      expect(staying.events.some((e) => e.event === 'expired')).toBe(false);
      staying.close();
      client.socket.close();
      await client.closed;
    } finally {
      await short.close();
    }
  });
});
