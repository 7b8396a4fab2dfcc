import { describe, expect, it } from '@jest/globals';
import { unique } from '../support/api.js';
import { instanceIdOf, registryForFile, RpcClient, type RpcResponse, statementsDuring } from '../support/controller.js';
import { token } from '../support/tokens.js';

/**
 * JSON-RPC 2.0 notification semantics on /ws/microservice (DESIGN 8, issue 41): a frame without `id` is never
 * answered whatever it holds, and is logged; a verified socket stays open; a socket without a verified token
 * is closed 1008 by any frame (a request answered -32001 first, a notification not).
 */
const registry = registryForFile();

async function runtime(serviceId: string): Promise<RpcClient> {
  return RpcClient.connect(registry.controller.wsUrl, {
    token: await token({ sub: 'rt', sid: serviceId, host: registry.controller.hostId }),
  });
}

/** Sends `frames`, then one request: its answer must be the next frame (requests wait for earlier notifications). */
async function unanswered(client: RpcClient, serviceId: string, send: () => void): Promise<RpcResponse> {
  const before = client.received.length;
  send();
  const answer = await client.call('discovery/lookup', { serviceId }, 'probe');
  expect(client.received.slice(before)).toEqual([answer]);
  expect(client.socket.readyState).toBe(client.socket.OPEN);
  return answer;
}

const notificationLines = (serviceId: string) =>
  registry.controller.logs.lines.filter(
    (line) =>
      line.tokenSid === serviceId && (line.msg === 'notification refused' || line.msg === 'notification ignored'),
  );

describe('notifications on a verified socket', () => {
  it.each<[string, string | Buffer, boolean]>([
    [
      'bad params for update_metadata',
      '{"jsonrpc":"2.0","method":"service/update_metadata","params":{"port":"x"}}',
      false,
    ],
    ['params by position', '{"jsonrpc":"2.0","method":"service/update_metadata","params":[1]}', false],
    [
      'an unknown method (upstream log)',
      '{"jsonrpc":"2.0","method":"log","params":{"level":"info","msg":"hi"}}',
      false,
    ],
    ['a reserved name', '{"jsonrpc":"2.0","method":"rpc.invalid"}', false],
    ['a bad jsonrpc version', '{"jsonrpc":"1.0","method":"discovery/lookup"}', false],
    ['no method at all', '{"jsonrpc":"2.0","params":{}}', false],
    ['a binary frame', Buffer.from('{"jsonrpc":"2.0","method":"service/update_metadata","params":{}}'), true],
  ])('%s: no answer, logged, the socket stays open', async (_name, frame, binary) => {
    const serviceId = unique('notif');
    const client = await runtime(serviceId);
    await unanswered(client, serviceId, () => client.sendRaw(frame, binary));
    expect(notificationLines(serviceId)).toHaveLength(1);
    await client.close();
  });

  it('every kind at once, interleaved with a registration: only the requests are answered', async () => {
    const serviceId = unique('notif-mix');
    const client = await runtime(serviceId);
    const id = instanceIdOf(await client.call('service/register', { serviceId, address: '10.41.0.1', port: 1 }));
    await unanswered(client, serviceId, () => {
      client.notify('service/explode', {});
      client.notify('service/update_metadata', { tags: ['not', 'a', 'map'] });
      client.notify('service/deregister', { runtimeInstanceId: 'someone-elses' });
      client.notify('discovery/unsubscribe', { subscriptionId: 'nope' });
      client.sendRaw(Buffer.from('{"jsonrpc":"2.0","method":"service/update_metadata","params":{"port":0}}'), true);
    });
    expect((await registry.table.byId(id))?.status).toBe('connected');
    await client.close();
  });

  it('a refused register notification (another sid) stores nothing and leaves the socket open', async () => {
    const serviceId = unique('notif-bind');
    const client = await runtime(serviceId);
    const other = unique('notif-other');
    await unanswered(client, serviceId, () => client.notify('service/register', { serviceId: other }));
    expect(await registry.table.byService(other)).toEqual([]);
    await client.close();
  });
});

describe('any frame on a socket without a verified token closes it with 1008', () => {
  it.each<[string, string | Buffer, boolean, RpcResponse | undefined]>([
    [
      'a request of an unknown method',
      '{"jsonrpc":"2.0","id":5,"method":"nope"}',
      false,
      { jsonrpc: '2.0', id: 5, error: { code: -32001, message: 'Unauthorized', data: { status: 401 } } },
    ],
    [
      'a notification of a known method',
      '{"jsonrpc":"2.0","method":"service/update_metadata","params":{}}',
      false,
      undefined,
    ],
    [
      'bad JSON',
      '{"jsonrpc":',
      false,
      { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Unauthorized', data: { status: 401 } } },
    ],
    [
      'a binary request',
      Buffer.from('{"jsonrpc":"2.0","id":"b","method":"discovery/lookup"}'),
      true,
      { jsonrpc: '2.0', id: 'b', error: { code: -32001, message: 'Unauthorized', data: { status: 401 } } },
    ],
    ['a binary notification', Buffer.from('{"jsonrpc":"2.0","method":"log"}'), true, undefined],
    ['an invalid notification', '{"jsonrpc":"1.0","method":"log"}', false, undefined],
  ])('%s', async (_name, frame, binary, answer) => {
    const anonymous = await RpcClient.connect(registry.controller.wsUrl, {});
    const { all } = await statementsDuring(async () => {
      anonymous.sendRaw(frame, binary);
      return anonymous.waitClosed();
    });
    expect(await anonymous.closed).toEqual({ code: 1008, reason: 'Unauthorized' });
    expect(anonymous.received).toEqual(answer === undefined ? [] : [answer]);
    expect(all).toEqual([]);
  });
});
