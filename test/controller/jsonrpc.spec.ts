import { afterEach, describe, expect, it } from '@jest/globals';
import { unique } from '../support/api.js';
import { registryForFile, RpcClient, statementsDuring, UpgradeRefused } from '../support/controller.js';
import { token } from '../support/tokens.js';

const registry = registryForFile();
let client: RpcClient;
let serviceId: string;

async function connect(): Promise<RpcClient> {
  serviceId = unique('rpc');
  client = await RpcClient.connect(registry.controller.wsUrl, {
    token: await token({ sid: serviceId, host: registry.controller.hostId }),
  });
  return client;
}

afterEach(async () => {
  await client?.close();
  await registry.controller.quiesce();
});

const errorOf = (code: number, message: string) => ({ code, message });

describe('JSON-RPC framing on /ws/microservice', () => {
  it('bad JSON: -32700 with id null, and the socket stays open', async () => {
    await connect();
    client.sendRaw('{"jsonrpc":"2.0","id":1,"method":');
    expect(await client.next()).toEqual({ jsonrpc: '2.0', id: null, error: errorOf(-32700, 'Parse error') });
    const after = await client.call('discovery/lookup', { serviceId });
    expect(after.result).toEqual({ serviceId, envTag: null, nodes: [] });
  });

  it('the binding comes before params: another service id with a bad port is -32003 and closes 1008', async () => {
    await connect();
    const response = await client.call('service/register', { serviceId: 'someone-else', port: 'x' });
    expect(response.error).toEqual({
      code: -32003,
      message: 'Token sid does not match requested serviceId',
      data: { status: 403 },
    });
    expect(await client.waitClosed()).toEqual({ code: 1008, reason: 'Token sid does not match requested serviceId' });
  });

  it.each<[string, unknown]>([
    ['params by position', ['s']],
    ['serviceId a number', { serviceId: 5 }],
    ['a bad port', { serviceId: 'svc', port: 'x' }],
    ['jwt a number', { serviceId: 'svc', jwt: 5 }],
  ])('no token and bad params (%s): -32001 and close 1008, the token comes first', async (_name, params) => {
    const anonymous = await RpcClient.connect(registry.controller.wsUrl, {});
    try {
      const response = await anonymous.call('service/register', params);
      expect(response.error).toEqual({ code: -32001, message: 'Unauthorized', data: { status: 401 } });
      expect(await anonymous.waitClosed()).toEqual({ code: 1008, reason: 'Unauthorized' });
    } finally {
      await anonymous.close();
    }
  });

  it.each<[string, string, string | number | null]>([
    ['a number', '42', null],
    ['a string', '"service/register"', null],
    ['a batch (not supported)', '[{"jsonrpc":"2.0","id":1,"method":"discovery/lookup"}]', null],
    ['an empty batch', '[]', null],
    ['no jsonrpc member', '{"id":7,"method":"discovery/lookup","params":{}}', 7],
    ['jsonrpc 1.0', '{"jsonrpc":"1.0","id":"a","method":"discovery/lookup"}', 'a'],
    ['no method', '{"jsonrpc":"2.0","id":8}', 8],
    ['method not a string', '{"jsonrpc":"2.0","id":9,"method":1,"params":"bar"}', 9],
    ['params neither object nor array', '{"jsonrpc":"2.0","id":10,"method":"discovery/lookup","params":"x"}', 10],
    ['id an object', '{"jsonrpc":"2.0","id":{"a":1},"method":"discovery/lookup"}', null],
  ])('not a request (%s): -32600', async (_name, frame, id) => {
    await connect();
    client.sendRaw(frame);
    const response = await client.next();
    expect(response).toMatchObject({ jsonrpc: '2.0', id, error: errorOf(-32600, 'Invalid Request') });
  });

  it('a binary frame: -32600 with the id of the request it carries, the socket open', async () => {
    await connect();
    client.sendRaw(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'discovery/lookup' })), true);
    expect(await client.next()).toMatchObject({ id: 1, error: errorOf(-32600, 'Invalid Request') });
    client.sendRaw(Buffer.from('not json'), true);
    expect(await client.next()).toMatchObject({ id: null, error: errorOf(-32600, 'Invalid Request') });
    expect((await client.call('discovery/lookup', { serviceId }, 'after')).result).toBeDefined();
  });

  it('unknown method: -32601 with the request id', async () => {
    await connect();
    expect(await client.call('service/explode', {}, 'x-1')).toEqual({
      jsonrpc: '2.0',
      id: 'x-1',
      error: errorOf(-32601, 'Method not found'),
    });
    // The socket stays open.
    expect((await client.call('discovery/lookup', { serviceId })).result).toBeDefined();
  });

  it.each<[string, string]>([
    ['an unknown method', '{"jsonrpc":"2.0","id":1,"method":"nope"}'],
    ['the fallback name itself', '{"jsonrpc":"2.0","id":1,"method":"rpc.unknown"}'],
    ['an unknown method with a jwt param', '{"jsonrpc":"2.0","id":1,"method":"nope","params":{"jwt":"x.y.z"}}'],
  ])('no token, %s: -32001 and close 1008, nothing read or stored (DESIGN 8)', async (_name, frame) => {
    const anonymous = await RpcClient.connect(registry.controller.wsUrl, {});
    try {
      const { result: response, all } = await statementsDuring(async () => {
        anonymous.sendRaw(frame);
        return anonymous.next();
      });
      expect(response).toEqual({
        jsonrpc: '2.0',
        id: 1,
        error: { code: -32001, message: 'Unauthorized', data: { status: 401 } },
      });
      expect(await anonymous.waitClosed()).toEqual({ code: 1008, reason: 'Unauthorized' });
      expect(all).toEqual([]);
    } finally {
      await anonymous.close();
    }
  });

  it('no token, an unknown method as a notification: no answer, but still closed with 1008', async () => {
    const anonymous = await RpcClient.connect(registry.controller.wsUrl, {});
    anonymous.notify('nope', {});
    expect(await anonymous.waitClosed()).toEqual({ code: 1008, reason: 'Unauthorized' });
    expect(anonymous.received).toEqual([]);
  });

  // A registration always names its service, so the binding decides params it cannot compare (DESIGN 6.3 rule 5).
  it.each<[string, Record<string, unknown> | unknown[] | undefined, string]>([
    ['no params', undefined, 'Token sid does not match requested serviceId'],
    ['serviceId missing', { address: 'a' }, 'Token sid does not match requested serviceId'],
    ['serviceId blank', { serviceId: '  ' }, 'Token sid does not match requested serviceId'],
    ['serviceId not a string', { serviceId: 5 }, 'Token sid does not match requested serviceId'],
    ['params by position', ['s'], 'Token sid does not match requested serviceId'],
    ['envTag not a string', { serviceId: 's', envTag: 3 }, 'Token env does not match requested envTag'],
  ])('params the binding cannot compare (%s): -32003, closed 1008, nothing stored', async (_name, given, sentence) => {
    await connect();
    const params =
      given === undefined || Array.isArray(given) || given.serviceId !== 's' ? given : { ...given, serviceId };
    const { result: response, all } = await statementsDuring(() => client.call('service/register', params));
    expect(response.error).toEqual({ code: -32003, message: sentence, data: { status: 403 } });
    expect(await client.waitClosed()).toEqual({ code: 1008, reason: sentence });
    expect(all).toEqual([]);
  });

  it.each<[string, Record<string, unknown> | unknown[] | undefined, string[]]>([
    ['port out of range and not an integer', { serviceId: 's', port: 70000.5 }, ['port']],
    ['port as a string', { serviceId: 's', port: '8080' }, ['port']],
    ['unknown protocol', { serviceId: 's', protocol: 'ftp' }, ['protocol']],
    ['tags not a string map', { serviceId: 's', tags: { a: 1 } }, ['tags']],
    ['tags an array', { serviceId: 's', tags: ['a'] }, ['tags']],
    ['version too long', { serviceId: 's', version: 'v'.repeat(101) }, ['version']],
  ])('bad params (%s): -32602 naming the fields, nothing stored', async (_name, given, fields) => {
    await connect();
    // `s` stands for the token's own sid: the binding is decided before params (DESIGN 8).
    const params =
      given === undefined || Array.isArray(given) || given.serviceId !== 's' ? given : { ...given, serviceId };
    const response = await client.call('service/register', params);
    expect(response.error).toMatchObject({ code: -32602, message: 'Invalid params', data: { status: 400 } });
    const errors = response.error?.data?.errors as { field: string; message: string }[];
    expect([...new Set(errors.map((e) => e.field))].sort()).toEqual(fields);
    for (const e of errors) expect(typeof e.message).toBe('string');
    // Bad params are not a reason to drop the connection.
    expect((await client.call('discovery/lookup', { serviceId })).result).toBeDefined();
  });

  it('notifications are never answered, whatever they ask', async () => {
    await connect();
    client.notify('service/explode', {});
    client.notify('discovery/lookup', { serviceId });
    client.notify('service/register', { serviceId, port: 'not-a-port' });
    client.sendRaw(JSON.stringify({ jsonrpc: '2.0', method: 'discovery/lookup', params: ['by-position'] }));
    // A request is served after the notifications sent before it, so any answer to them would come first.
    const response = await client.call('discovery/lookup', { serviceId }, 'last');
    expect(client.received).toEqual([response]);
  });

  it('a request with id null is answered with id null', async () => {
    await connect();
    client.sendRaw(JSON.stringify({ jsonrpc: '2.0', id: null, method: 'discovery/lookup', params: { serviceId } }));
    expect(await client.next()).toEqual({ jsonrpc: '2.0', id: null, result: { serviceId, envTag: null, nodes: [] } });
  });

  it('a frame of exactly 64 KiB is read; one byte more closes the socket with 1009', async () => {
    await connect();
    const pad = (size: number): string => {
      const head = `{"jsonrpc":"2.0","id":"big","method":"discovery/lookup","params":{"serviceId":"${serviceId}","pad":"`;
      const tail = '"}}';
      return head + 'x'.repeat(size - head.length - tail.length) + tail;
    };
    client.sendRaw(pad(64 * 1024));
    expect((await client.response((r) => r.id === 'big')).result).toMatchObject({ serviceId });
    client.sendRaw(pad(64 * 1024 + 1));
    expect((await client.waitClosed()).code).toBe(1009);
  });

  it('a frame over 64 KiB carrying a registration stores nothing', async () => {
    await connect();
    const tags: Record<string, string> = {};
    for (let i = 0; i < 80; i += 1) tags[`k${i}`] = 'v'.repeat(1000);
    client.sendRaw(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'service/register', params: { serviceId, tags } }));
    expect((await client.waitClosed()).code).toBe(1009);
    await registry.controller.quiesce();
    expect(await registry.table.byService(serviceId)).toEqual([]);
  });

  it('another path is not upgraded: 404, answered rather than dropped', async () => {
    const error = await RpcClient.connect(registry.controller.wsUrl.replace('/ws/microservice', '/ws/other')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UpgradeRefused);
    expect((error as UpgradeRefused).status).toBe(404);
    expect((error as UpgradeRefused).headers['content-type']).toBe('application/problem+json');
  });

  it('replies match requests by id even when several are in flight', async () => {
    await connect();
    const ids = ['a', 'b', 'c', 'd'];
    const answers = await Promise.all(ids.map((id) => client.call('discovery/lookup', { serviceId }, id)));
    expect(answers.map((a) => a.id)).toEqual(ids);
  });
});
