import { describe, expect, it } from '@jest/globals';
import { unique } from '../support/api.js';
import { instanceIdOf, registryForFile, RpcClient } from '../support/controller.js';
import { token } from '../support/tokens.js';

/** `service/deregister` `{ runtimeInstanceId, reason? }` (DESIGN 8, issue 41): the upstream reason, logged. */
const registry = registryForFile();

async function registered(serviceId: string): Promise<{ client: RpcClient; id: string }> {
  const jwt = await token({ sub: 'rt', sid: serviceId, host: registry.controller.hostId });
  const client = await RpcClient.connect(registry.controller.wsUrl, { token: jwt });
  const id = instanceIdOf(await client.call('service/register', { serviceId, address: '10.41.7.7', port: 7 }));
  return { client, id };
}

describe('service/deregister with a reason', () => {
  it('answers { runtimeInstanceId, status: "deregistered" } and logs the reason', async () => {
    const serviceId = unique('dereg');
    const { client, id } = await registered(serviceId);
    const answer = await client.call('service/deregister', {
      runtimeInstanceId: id,
      reason: 'rolling update to 1.0.2',
    });
    expect(answer).toEqual({
      jsonrpc: '2.0',
      id: answer.id,
      result: { runtimeInstanceId: id, status: 'deregistered' },
    });
    expect((await registry.table.byId(id))?.status).toBe('deregistered');
    const line = registry.controller.logs.lines.find(
      (l) => l.msg === 'instance deregistered' && l.runtimeInstanceId === id,
    );
    expect(line?.reason).toBe('rolling update to 1.0.2');
    await client.close();
  });

  it.each<[string, unknown]>([
    ['longer than 200 characters', 'r'.repeat(201)],
    ['with a control character', 'line one\nline two'],
    ['not a string', 42],
  ])('a reason %s: -32602 naming reason, the instance stays registered', async (_name, reason) => {
    const serviceId = unique('dereg-bad');
    const { client, id } = await registered(serviceId);
    const answer = await client.call('service/deregister', { runtimeInstanceId: id, reason });
    expect(answer.error).toMatchObject({ code: -32602, data: { status: 400 } });
    const errors = answer.error?.data?.errors as { field: string }[];
    expect(new Set(errors.map((e) => e.field))).toEqual(new Set(['reason']));
    expect((await registry.table.byId(id))?.status).toBe('connected');
    await client.close();
  });

  it('a reason of exactly 200 characters is accepted', async () => {
    const { client, id } = await registered(unique('dereg-200'));
    const answer = await client.call('service/deregister', { runtimeInstanceId: id, reason: 'r'.repeat(200) });
    expect(answer.result).toEqual({ runtimeInstanceId: id, status: 'deregistered' });
    await client.close();
  });
});
