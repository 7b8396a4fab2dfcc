import { describe, expect, it } from '@jest/globals';
import { unique } from '../support/api.js';
import { instanceIdOf, type InstanceRow, registryForFile, RpcClient } from '../support/controller.js';
import { token } from '../support/tokens.js';

/**
 * The rules of `service/update_metadata` (DESIGN 8 and 16, issue 41): validated like `service/register`, an
 * invalid or refused notification changes nothing and is logged (never answered); only the socket's own
 * registrations change; `registry:register` is needed; a request gets the usual answers.
 */
const registry = registryForFile();

async function runtime(serviceId: string, claims: Record<string, unknown> = {}): Promise<RpcClient> {
  const jwt = await token({ sub: 'rt', sid: serviceId, host: registry.controller.hostId, ...claims });
  return RpcClient.connect(registry.controller.wsUrl, { token: jwt });
}

async function register(client: RpcClient, serviceId: string, port: number): Promise<string> {
  const params = { serviceId, version: '1.0.0', protocol: 'http', address: '10.41.9.9', port, tags: { zone: 'a' } };
  return instanceIdOf(await client.call('service/register', params));
}

/** A request after notifications is served after them (DESIGN 8 ordering): their effects are in the table. */
async function settled(client: RpcClient, serviceId: string): Promise<void> {
  await client.call('discovery/lookup', { serviceId });
}

/** What a watcher could see of a row (liveness aside). */
const visible = (row: InstanceRow | undefined) => {
  if (row === undefined) return undefined;
  const { last_seen_ts: _seen, ...rest } = row;
  return rest;
};

const refusals = (serviceId: string) =>
  registry.controller.logs.lines.filter((l) => l.msg === 'notification refused' && l.tokenSid === serviceId);

describe('service/update_metadata: invalid fields change nothing', () => {
  it.each<[string, Record<string, unknown>, string[]]>([
    ['a port that is a string', { port: '8444' }, ['port']],
    ['port 0', { port: 0 }, ['port']],
    ['a port out of range', { port: 70000 }, ['port']],
    ['an unknown protocol', { protocol: 'ftp' }, ['protocol']],
    ['a version too long', { version: 'v'.repeat(101) }, ['version']],
    ['a version with a control character', { version: '1.0\u0000' }, ['version']],
    ['tags not a string map', { tags: { zone: 1 } }, ['tags']],
    ['tags an array', { tags: ['zone'] }, ['tags']],
    ['a valid version beside a bad port', { version: '9.9.9', port: -1 }, ['port']],
    ['a runtimeInstanceId that is not a string', { runtimeInstanceId: 7, version: '9.9.9' }, ['runtimeInstanceId']],
  ])('%s: the row is unchanged, the refusal logged with the fields', async (_name, params, fields) => {
    const serviceId = unique('meta-bad');
    const client = await runtime(serviceId);
    const id = await register(client, serviceId, 8443);
    const before = visible(await registry.table.byId(id));
    client.notify('service/update_metadata', params);
    await settled(client, serviceId);
    expect(visible(await registry.table.byId(id))).toEqual(before);
    const [line] = refusals(serviceId);
    expect(line).toMatchObject({ method: 'service/update_metadata', code: -32602 });
    expect([...new Set((line?.errors as { field: string }[]).map((e) => e.field))]).toEqual(fields);
    expect(JSON.stringify(line)).not.toContain('9.9.9');
    // The same params as a request: answered -32602, as `service/register` answers them.
    const answer = await client.call('service/update_metadata', params);
    expect(answer.error).toMatchObject({ code: -32602, message: 'Invalid params', data: { status: 400 } });
    expect(visible(await registry.table.byId(id))).toEqual(before);
    await client.close();
  });
});

describe('service/update_metadata: whose registrations', () => {
  it('every registration of the socket, or only the one it names; never another socket’s', async () => {
    const serviceId = unique('meta-own');
    const client = await runtime(serviceId);
    const [first, second] = [await register(client, serviceId, 1), await register(client, serviceId, 2)];
    client.notify('service/update_metadata', { runtimeInstanceId: second, version: '2.0.0' });
    await settled(client, serviceId);
    expect([(await registry.table.byId(first))?.version, (await registry.table.byId(second))?.version]).toEqual([
      '1.0.0',
      '2.0.0',
    ]);
    client.notify('service/update_metadata', { tags: { zone: 'c' } });
    await settled(client, serviceId);
    expect([(await registry.table.byId(first))?.tags, (await registry.table.byId(second))?.tags]).toEqual([
      { zone: 'c' },
      { zone: 'c' },
    ]);

    const other = await runtime(serviceId);
    const before = visible(await registry.table.byId(first));
    other.notify('service/update_metadata', { runtimeInstanceId: first, version: '6.6.6' });
    other.notify('service/update_metadata', { version: '6.6.6' });
    await settled(other, serviceId);
    expect(visible(await registry.table.byId(first))).toEqual(before);
    expect(refusals(serviceId).map((l) => l.reason)).toEqual([
      'runtimeInstanceId was not registered on this connection',
      'Invalid params',
    ]);
    expect(await other.call('service/update_metadata', { version: '6.6.6' })).toMatchObject({
      error: { code: -32602, data: { errors: [{ field: 'runtimeInstanceId' }] } },
    });
    expect(await client.call('service/update_metadata', { version: '3.0.0' })).toMatchObject({
      result: { runtimeInstanceIds: [first, second].sort(), status: 'updated' },
    });
    await Promise.all([client.close(), other.close()]);
  });

  it('a token without registry:register (tags:read only): nothing changes, the refusal is logged', async () => {
    const serviceId = unique('meta-cap');
    const owner = await runtime(serviceId);
    const id = await register(owner, serviceId, 8443);
    const before = visible(await registry.table.byId(id));
    const reader = await runtime(serviceId, { scope: 'tags:read' });
    reader.notify('service/update_metadata', { runtimeInstanceId: id, version: '6.6.6', port: 6666 });
    reader.notify('service/update_metadata', { version: '6.6.6' });
    // The probe is served after the reader's notifications (DESIGN 8 ordering).
    const probe = await reader.call('discovery/unsubscribe', { subscriptionId: 'x' });
    expect(probe.error?.code).toBe(-32003);
    expect(visible(await registry.table.byId(id))).toEqual(before);
    expect(refusals(serviceId)).toEqual([
      expect.objectContaining({ code: -32003, reason: 'The token lacks the capability registry:register' }),
      expect.objectContaining({ code: -32003, reason: 'The token lacks the capability registry:register' }),
    ]);
    // Notifications got no answer; the socket is still open, and a request is answered -32003 as ever.
    expect(reader.received).toEqual([probe]);
    expect(await reader.call('service/update_metadata', { version: '6.6.6' })).toMatchObject({
      error: { code: -32003, data: { status: 403 } },
    });
    await Promise.all([owner.close(), reader.close()]);
  });
});

describe('service/update_metadata: the port is part of the identity', () => {
  it('refused while another connected registration has that address and port; taken once that one left', async () => {
    const serviceId = unique('meta-port');
    const holder = await runtime(serviceId);
    const taken = await register(holder, serviceId, 10);
    const mover = await runtime(serviceId);
    const moving = await register(mover, serviceId, 11);
    mover.notify('service/update_metadata', { port: 10, version: '2.0.0' });
    await settled(mover, serviceId);
    expect(await registry.table.byId(moving)).toMatchObject({ port: 11, version: '1.0.0' });
    expect(refusals(serviceId)).toEqual([expect.objectContaining({ code: -32602, errors: [expect.anything()] })]);

    // The holder leaves: its row (disconnected, an earlier run's) gives the identity up to the live one.
    await holder.close();
    await registry.controller.quiesce();
    mover.notify('service/update_metadata', { port: 10, version: '2.0.0' });
    await settled(mover, serviceId);
    expect(await registry.table.byId(moving)).toMatchObject({ port: 10, version: '2.0.0', status: 'connected' });
    expect(await registry.table.byId(taken)).toBeUndefined();
    const lookup = await mover.call('discovery/lookup', { serviceId });
    expect(lookup.result?.nodes).toMatchObject([{ runtimeInstanceId: moving, port: 10 }]);
    await mover.close();
  });
});

describe('notifications act in the order they were sent', () => {
  it('updates sent right behind the registration, before its answer, all land, the last one last', async () => {
    const serviceId = unique('meta-order');
    const client = await runtime(serviceId);
    const register = { serviceId, address: '10.41.8.8', port: 8443, version: '1.0.0' };
    client.sendRaw(JSON.stringify({ jsonrpc: '2.0', id: 'r', method: 'service/register', params: register }));
    for (let i = 1; i <= 5; i += 1) client.notify('service/update_metadata', { version: `1.0.${i}` });
    const lookup = await client.call('discovery/lookup', { serviceId });
    expect(lookup.result?.nodes).toMatchObject([{ version: '1.0.5' }]);
    const registered = await client.response((r) => r.id === 'r');
    expect((await registry.table.byId(instanceIdOf(registered)))?.version).toBe('1.0.5');
    await client.close();
  });
});
