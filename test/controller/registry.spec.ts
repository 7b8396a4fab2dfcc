import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { unique } from '../support/api.js';
import {
  instanceIdOf,
  RegistryTable,
  RpcClient,
  startController,
  statementsDuring,
  waitFor,
  type TestController,
} from '../support/controller.js';
import { callers, token } from '../support/tokens.js';

let table: RegistryTable;

beforeAll(() => {
  table = new RegistryTable();
});

afterAll(async () => {
  await table?.end();
});

/** A runtime of `serviceId` on `controller`'s host, connected with its token in the Authorization header. */
async function runtime(controller: TestController, serviceId: string, env?: string): Promise<RpcClient> {
  const jwt = await token({ sub: 'rt', sid: serviceId, host: controller.hostId, ...(env ? { env } : {}) });
  return RpcClient.connect(controller.wsUrl, { token: jwt });
}

async function registered(client: RpcClient, params: Record<string, unknown>): Promise<string> {
  const response = await client.call('service/register', params);
  expect(response.result).toEqual({ runtimeInstanceId: expect.any(String), status: 'registered' });
  return instanceIdOf(response);
}

describe('registry', () => {
  let controller: TestController;

  beforeAll(async () => {
    controller = await startController();
  });

  afterAll(async () => {
    await controller?.close();
  });

  it('stores every registered field, with the controller host and this process as holder', async () => {
    const serviceId = unique('store');
    const client = await runtime(controller, serviceId, 'prod');
    const id = await registered(client, {
      serviceId,
      envTag: 'prod',
      version: '1.4.2',
      protocol: 'https',
      address: '10.1.2.3',
      port: 8443,
      tags: { zone: 'eu-1', canary: 'true' },
    });
    expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const row = await table.byId(id);
    expect(row).toMatchObject({
      host_id: controller.hostId,
      service_id: serviceId,
      env_tag: 'prod',
      version: '1.4.2',
      protocol: 'https',
      address: '10.1.2.3',
      port: 8443,
      tags: { zone: 'eu-1', canary: 'true' },
      status: 'connected',
      disconnected_ts: null,
      controller_id: controller.gateway['registry'].controllerId,
    });
    expect(row?.connected_ts).toBeInstanceOf(Date);
    expect(row?.last_seen_ts).toBeInstanceOf(Date);
    await client.close();
    await controller.quiesce();
  });

  it('re-registering the same host+service+env+address+port reuses the runtimeInstanceId', async () => {
    const serviceId = unique('reuse');
    const first = await runtime(controller, serviceId, 'prod');
    const params = { serviceId, envTag: 'prod', address: '10.0.0.1', port: 9000, version: '1' };
    const id = await registered(first, params);
    // Same socket again, then a new socket while the first is still open, then after it closed.
    expect(await registered(first, { ...params, version: '2' })).toBe(id);
    const second = await runtime(controller, serviceId, 'prod');
    expect(await registered(second, { ...params, version: '3' })).toBe(id);
    await first.close();
    await controller.quiesce();
    // The stale socket's close does not disconnect the registration the new socket holds.
    expect(await table.byId(id)).toMatchObject({ status: 'connected', version: '3' });
    await second.close();
    await controller.quiesce();
    const third = await runtime(controller, serviceId, 'prod');
    expect(await registered(third, params)).toBe(id);
    expect(await table.byId(id)).toMatchObject({ status: 'connected', disconnected_ts: null });
    // Any other identity is another instance.
    expect(await registered(third, { ...params, port: 9001 })).not.toBe(id);
    expect(await registered(third, { ...params, address: '10.0.0.2' })).not.toBe(id);
    // A prod-bound token registers under prod when envTag is omitted (DESIGN 6.3 rule 5): the same identity.
    expect(await registered(third, { serviceId, address: '10.0.0.1', port: 9000 })).toBe(id);
    const unbound = await runtime(controller, serviceId);
    expect(await registered(unbound, { serviceId, address: '10.0.0.1', port: 9000 })).not.toBe(id);
    expect(await table.byService(serviceId)).toHaveLength(4);
    await unbound.close();
    await third.close();
    await controller.quiesce();
  });

  it('concurrent registrations of one identity end with one row', async () => {
    const serviceId = unique('race');
    const clients = await Promise.all([1, 2, 3, 4].map(() => runtime(controller, serviceId)));
    const ids = await Promise.all(clients.map((c) => registered(c, { serviceId, address: 'h', port: 1 })));
    expect(new Set(ids).size).toBe(1);
    expect(await table.byService(serviceId)).toHaveLength(1);
    await Promise.all(clients.map((c) => c.close()));
    await controller.quiesce();
  });

  it('a closed socket marks its instances disconnected at once', async () => {
    const serviceId = unique('close');
    const client = await runtime(controller, serviceId);
    const a = await registered(client, { serviceId, address: '10.0.0.5', port: 80 });
    const b = await registered(client, { serviceId, address: '10.0.0.5', port: 81 });
    await client.close();
    await controller.quiesce();
    for (const id of [a, b]) {
      const row = await table.byId(id);
      expect(row?.status).toBe('disconnected');
      expect(row?.disconnected_ts).toBeInstanceOf(Date);
    }
  });

  it('an abruptly dropped socket (no close frame) marks its instances disconnected', async () => {
    const serviceId = unique('drop');
    const client = await runtime(controller, serviceId);
    const id = await registered(client, { serviceId, port: 82 });
    client.socket.terminate();
    await controller.quiesce();
    expect((await table.byId(id))?.status).toBe('disconnected');
  });

  it('service/deregister works only from the registering connection', async () => {
    const serviceId = unique('dereg');
    const owner = await runtime(controller, serviceId);
    const other = await runtime(controller, serviceId);
    const id = await registered(owner, { serviceId, port: 7000 });
    const { result: refused, registry } = await statementsDuring(() =>
      other.call('service/deregister', { runtimeInstanceId: id }),
    );
    expect(refused.error).toEqual({
      code: -32003,
      message: 'runtimeInstanceId was not registered on this connection',
      data: { status: 403 },
    });
    expect(registry).toEqual([]);
    expect((await table.byId(id))?.status).toBe('connected');
    // The refusal does not close the other connection; an unknown id is answered the same way.
    const unknown = await other.call('service/deregister', { runtimeInstanceId: 'NoSuchInstance' });
    expect(unknown.error?.code).toBe(-32003);
    expect(await owner.call('service/deregister', { runtimeInstanceId: id })).toMatchObject({
      result: { runtimeInstanceId: id, status: 'deregistered' },
    });
    expect((await table.byId(id))?.status).toBe('deregistered');
    // Deregistered twice: it is no longer this connection's.
    expect((await owner.call('service/deregister', { runtimeInstanceId: id })).error?.code).toBe(-32003);
    await Promise.all([owner.close(), other.close()]);
    await controller.quiesce();
    expect((await table.byId(id))?.status).toBe('deregistered');
  });

  it('service/deregister after another connection took the instance over is refused', async () => {
    const serviceId = unique('takeover');
    const first = await runtime(controller, serviceId);
    const second = await runtime(controller, serviceId);
    const id = await registered(first, { serviceId, port: 7100 });
    expect(await registered(second, { serviceId, port: 7100 })).toBe(id);
    expect((await first.call('service/deregister', { runtimeInstanceId: id })).error?.code).toBe(-32003);
    expect((await table.byId(id))?.status).toBe('connected');
    await Promise.all([first.close(), second.close()]);
    await controller.quiesce();
  });

  it('discovery/lookup returns connected instances of this host, filtered by envTag and protocol', async () => {
    const serviceId = unique('disc');
    const a = await runtime(controller, serviceId, 'prod');
    const b = await runtime(controller, serviceId, 'dev');
    const gone = await runtime(controller, serviceId, 'prod');
    const idA = await registered(a, {
      serviceId,
      envTag: 'prod',
      protocol: 'https',
      address: '10.9.0.1',
      port: 443,
      version: '2',
      tags: { zone: 'a' },
    });
    const idB = await registered(b, { serviceId, envTag: 'dev', protocol: 'http', address: '10.9.0.2', port: 80 });
    await registered(gone, { serviceId, envTag: 'prod', protocol: 'https', address: '10.9.0.3', port: 443 });
    await gone.close();
    await controller.quiesce();

    const asker = await runtime(controller, unique('asker'));
    const all = await asker.call('discovery/lookup', { serviceId });
    expect(all.result).toMatchObject({ serviceId, envTag: null });
    expect((all.result?.nodes as { runtimeInstanceId: string }[]).map((n) => n.runtimeInstanceId).sort()).toEqual(
      [idA, idB].sort(),
    );
    const prod = await asker.call('discovery/lookup', { serviceId, envTag: 'prod' });
    expect(prod.result).toEqual({
      serviceId,
      envTag: 'prod',
      nodes: [
        {
          runtimeInstanceId: idA,
          envTag: 'prod',
          version: '2',
          protocol: 'https',
          address: '10.9.0.1',
          port: 443,
          tags: { zone: 'a' },
        },
      ],
    });
    const http = await asker.call('discovery/lookup', { serviceId, protocol: 'http' });
    expect((http.result?.nodes as { runtimeInstanceId: string }[]).map((n) => n.runtimeInstanceId)).toEqual([idB]);
    expect((await asker.call('discovery/lookup', { serviceId: unique('none') })).result?.nodes).toEqual([]);
    await Promise.all([a.close(), b.close(), asker.close()]);
    await controller.quiesce();
  });

  it("discovery/lookup needs the token's host to be the controller's: -32003 before any SQL", async () => {
    const serviceId = unique('disc-host');
    const owner = await runtime(controller, serviceId);
    await registered(owner, { serviceId, port: 1 });
    for (const claims of [{ host: 'another-host' }, {}, { host: ' ' }]) {
      const stranger = await RpcClient.connect(controller.wsUrl, { token: await token({ sid: 'x', ...claims }) });
      const { result, all } = await statementsDuring(() => stranger.call('discovery/lookup', { serviceId }));
      expect(result.error).toEqual({
        code: -32003,
        message: 'Token host does not match controller hostId',
        data: { status: 403 },
      });
      expect(all).toEqual([]);
      await stranger.close();
    }
    await owner.close();
    await controller.quiesce();
  });

  it('another host registered in the same database is invisible to discovery', async () => {
    const serviceId = unique('iso');
    const elsewhere = await startController();
    try {
      const there = await runtime(elsewhere, serviceId);
      await registered(there, { serviceId, port: 5 });
      const here = await runtime(controller, serviceId);
      expect((await here.call('discovery/lookup', { serviceId })).result?.nodes).toEqual([]);
      await Promise.all([there.close(), here.close()]);
      await Promise.all([elsewhere.quiesce(), controller.quiesce()]);
    } finally {
      await elsewhere.close();
    }
  });

  it('without a header, the params.jwt of a registration serves the later calls of the connection', async () => {
    const serviceId = unique('nohdr');
    const jwt = await token({ sid: serviceId, host: controller.hostId });
    const client = await RpcClient.connect(controller.wsUrl);
    // Before any registration there is no token to act with: -32001 and the connection is closed.
    const early = await RpcClient.connect(controller.wsUrl);
    expect((await early.call('discovery/lookup', { serviceId })).error).toEqual({
      code: -32001,
      message: 'Unauthorized',
      data: { status: 401 },
    });
    expect(await early.waitClosed()).toEqual({ code: 1008, reason: 'Unauthorized' });
    const id = await registered(client, { serviceId, port: 4, jwt });
    expect((await client.call('discovery/lookup', { serviceId })).result?.nodes).toHaveLength(1);
    // A later registration may omit it: the socket's token was verified once (DESIGN 8).
    const later = await registered(client, { serviceId, port: 5 });
    await client.close();
    await controller.quiesce();
    expect([(await table.byId(id))?.status, (await table.byId(later))?.status]).toEqual([
      'disconnected',
      'disconnected',
    ]);
  });

  it('GET /instances: 401 without a token, 403 without portal.admin, 200 with the list', async () => {
    const serviceId = unique('list');
    const client = await runtime(controller, serviceId, 'prod');
    const id = await registered(client, {
      serviceId,
      envTag: 'prod',
      address: '10.7.0.1',
      port: 8080,
      tags: { a: 'b' },
    });
    await registered(client, { serviceId, envTag: 'prod', address: '10.7.0.1', port: 8081 });

    const { result: none, queries: noneSql } = await sqlCount(() =>
      controller.app.inject({ method: 'GET', url: '/instances' }),
    );
    expect(none.statusCode).toBe(401);
    expect(none.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(noneSql).toBe(0);
    const reader = await callers.reader(controller.hostId);
    const { result: weak, queries: weakSql } = await sqlCount(() =>
      controller.app.inject({ method: 'GET', url: '/instances', headers: { authorization: `Bearer ${reader}` } }),
    );
    expect(weak.statusCode).toBe(403);
    expect(weakSql).toBe(0);

    const admin = await callers.admin();
    const list = await controller.app.inject({
      method: 'GET',
      url: `/instances?serviceId=${serviceId}&limit=1`,
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({
      total: 2,
      instances: [
        {
          runtimeInstanceId: id,
          hostId: controller.hostId,
          serviceId,
          envTag: 'prod',
          version: null,
          protocol: null,
          address: '10.7.0.1',
          port: 8080,
          tags: { a: 'b' },
          status: 'connected',
          connectedTs: expect.stringMatching(/Z$/),
          lastSeenTs: expect.stringMatching(/Z$/),
          disconnectedTs: null,
          controllerId: expect.any(String),
        },
      ],
      // The second instance follows: its page is the cursor's (DESIGN 4.2).
      next: expect.any(String),
    });
    await client.close();
    await controller.quiesce();
    const after = await controller.app.inject({
      method: 'GET',
      url: `/instances?serviceId=${serviceId}&status=disconnected`,
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(after.json()).toMatchObject({ total: 2 });
    const bad = await controller.app.inject({
      method: 'GET',
      url: '/instances?status=gone&limit=0',
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(bad.statusCode).toBe(400);
  });

  it('GET /metrics counts held instances and binding rejections', async () => {
    const serviceId = unique('metrics');
    const client = await runtime(controller, serviceId);
    await registered(client, { serviceId, port: 3 });
    const bad = await RpcClient.connect(controller.wsUrl, {
      token: await token({ sid: 'someone-else', host: controller.hostId }),
    });
    await bad.call('service/register', { serviceId });
    await bad.waitClosed();
    const metrics = (await controller.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^bindery_registered_instances 1$/m);
    expect(metrics).toMatch(/bindery_binding_rejections_total\{reason="sid",endpoint="service\/register"\} \d+/);
    await client.close();
    await controller.quiesce();
  });
});

async function sqlCount<T>(action: () => Promise<T>): Promise<{ result: T; queries: number }> {
  const { result, all } = await statementsDuring(action);
  return { result, queries: all.length };
}

describe('liveness', () => {
  let controller: TestController;

  beforeAll(async () => {
    controller = await startController({ WS_PING_INTERVAL_MS: '150' });
  });

  afterAll(async () => {
    await controller?.close();
  });

  it('a socket that stops answering pings is dropped and its instances disconnected; a live one stays', async () => {
    const silentId = unique('silent');
    const liveId = unique('live');
    const silent = await RpcClient.connect(controller.wsUrl, {
      token: await token({ sid: silentId, host: controller.hostId }),
      autoPong: false,
    });
    const live = await runtime(controller, liveId);
    const dead = await registered(silent, { serviceId: silentId, port: 1 });
    const alive = await registered(live, { serviceId: liveId, port: 1 });
    const before = (await table.byId(alive))?.last_seen_ts;
    await silent.waitClosed();
    await waitFor(async () => (await table.byId(dead))?.status === 'disconnected', 'the silent instance to go');
    await waitFor(
      async () => ((await table.byId(alive))?.last_seen_ts.getTime() ?? 0) > (before?.getTime() ?? 0),
      'the live instance to be seen again',
    );
    expect((await table.byId(alive))?.status).toBe('connected');
    await live.close();
    await controller.quiesce();
  });
});

describe('start-up and shutdown', () => {
  it('a starting controller disconnects what a dead previous run of its host left connected, not live holders', async () => {
    const hostId = unique('restart');
    const live = await startController({ CONTROLLER_HOST_ID: hostId });
    try {
      const serviceId = unique('svc');
      const client = await runtime(live, serviceId);
      const held = await registered(client, { serviceId, port: 1 });
      // A row a crashed run of this host left behind (its controller holds no lease lock any more).
      const orphan = 'Orphan' + randomUUID().replace(/-/g, '').slice(0, 16);
      await table.query(
        `insert into runtime_instance (runtime_instance_id, host_id, service_id, status, controller_id, connection_id)
         values ($1, $2, $3, 'connected', $4, $5)`,
        [orphan, hostId, serviceId, randomUUID(), randomUUID()],
      );
      const restarted = await startController({ CONTROLLER_HOST_ID: hostId });
      await restarted.close();
      expect((await table.byId(orphan))?.status).toBe('disconnected');
      expect((await table.byId(held))?.status).toBe('connected');
      await client.close();
      await live.quiesce();
    } finally {
      await live.close();
    }
  });

  it('app.close() (SIGTERM) closes sockets with 1001 and marks their instances disconnected', async () => {
    const controller = await startController();
    const serviceId = unique('term');
    const client = await runtime(controller, serviceId);
    const id = await registered(client, { serviceId, port: 1 });
    const closing = controller.close();
    expect(await client.waitClosed()).toEqual({ code: 1001, reason: 'Server shutting down' });
    await closing;
    expect(await table.byId(id)).toMatchObject({ status: 'disconnected' });
  });

  it('ENFORCE_SID_HOST_MATCH=false: a mismatch registers, with a warning saying enforcement disabled', async () => {
    const controller = await startController({ ENFORCE_SID_HOST_MATCH: 'false' });
    try {
      const serviceId = unique('lenient');
      const client = await RpcClient.connect(controller.wsUrl, {
        token: await token({ sid: 'another-service', host: 'another-host' }),
      });
      const id = await registered(client, { serviceId, port: 1 });
      // The host stored is the controller's own, never the token's.
      expect(await table.byId(id)).toMatchObject({ host_id: controller.hostId, service_id: serviceId });
      const warning = controller.logs.lines.find((l) => l.requestedServiceId === serviceId);
      expect(warning).toMatchObject({ level: 40, endpoint: 'service/register', tokenSid: 'another-service' });
      expect(String(warning?.msg)).toContain('enforcement disabled');
      expect(controller.logs.raw.some((l) => l.includes('ENFORCE_SID_HOST_MATCH=false'))).toBe(true);
      // Signature, issuer and audience are still enforced.
      const forged = await RpcClient.connect(controller.wsUrl, {
        token: await token({ sid: serviceId, host: controller.hostId }, { issuer: 'https://evil.test' }),
      }).then(
        () => 'accepted',
        () => 'refused',
      );
      expect(forged).toBe('refused');
      await client.close();
      await controller.quiesce();
    } finally {
      await controller.close();
    }
  });
});
