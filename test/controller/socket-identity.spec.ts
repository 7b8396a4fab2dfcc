import { describe, expect, it } from '@jest/globals';
import { unique } from '../support/api.js';
import { registryForFile, RpcClient, statementsDuring } from '../support/controller.js';
import { token } from '../support/tokens.js';

/**
 * DESIGN 8: a socket's token is verified once, at the upgrade or from the first `service/register` carrying
 * `params.jwt`. On a socket without a header token, a later registration with another token (another sid,
 * or the same sid in another env) must not take the socket over: -32001, closed 1008, no SQL, nothing stored.
 */
const hostId = unique('identity-host');
const registry = registryForFile({ CONTROLLER_HOST_ID: hostId });

const UNAUTHORIZED = { code: -32001, message: 'Unauthorized', data: { status: 401 } };

const register = (serviceId: string, jwt: string, extra: Record<string, unknown> = {}) => ({
  serviceId,
  address: '10.42.0.1',
  port: 8443,
  jwt,
  ...extra,
});

describe('a socket without a header token keeps the token of its first registration', () => {
  const cases: [string, { readonly sid?: string; readonly env?: string }, Record<string, unknown>][] = [
    ['another sid', { sid: 'other' }, {}],
    ['the same sid in another env', { env: 'prod' }, { envTag: 'prod' }],
  ];
  it.each(cases)('a second registration with %s is -32001 and closes the socket', async (_, second, params) => {
    const serviceId = unique('identity');
    const first = await token({ sub: 'rt', sid: serviceId, host: hostId, env: 'dev' });
    const client = await RpcClient.connect(registry.controller.wsUrl);
    const registered = await client.call('service/register', register(serviceId, first, { envTag: 'dev' }));
    expect(registered.result?.status).toBe('registered');

    const otherSid = second.sid === undefined ? serviceId : unique(second.sid);
    const other = await token({ sub: 'rt', sid: otherSid, host: hostId, env: second.env ?? 'dev' });
    const { result, all } = await statementsDuring(async () => {
      const response = await client.call('service/register', register(otherSid, other, { port: 9443, ...params }));
      return { response, closed: await client.waitClosed() };
    });
    expect(result.response.error).toEqual(UNAUTHORIZED);
    expect(result.closed).toEqual({ code: 1008, reason: 'Unauthorized' });
    // The refused call sent nothing; only the close marks the first registration disconnected.
    expect(all.filter((sql) => !sql.includes('disconnected'))).toEqual([]);
    const rows = await registry.table.byService(otherSid);
    expect(rows.filter((row) => row.port === 9443)).toEqual([]);
  });

  it('a second registration sent before the first is answered cannot bring another token either', async () => {
    const serviceId = unique('identity-race');
    const otherSid = unique('identity-race-other');
    const [first, other] = await Promise.all([
      token({ sub: 'rt', sid: serviceId, host: hostId }),
      token({ sub: 'rt', sid: otherSid, host: hostId }),
    ]);
    const client = await RpcClient.connect(registry.controller.wsUrl);
    client.sendRaw(
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'service/register', params: register(serviceId, first) }),
    );
    client.sendRaw(
      JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'service/register', params: register(otherSid, other) }),
    );
    const refused = await client.response((r) => r.id === 2, 'the second answer');
    expect(refused.error).toEqual(UNAUTHORIZED);
    await client.waitClosed();
    expect(await registry.table.byService(otherSid)).toEqual([]);
  });

  it('later calls act with that token, whether they repeat params.jwt or omit it', async () => {
    const serviceId = unique('identity-same');
    const jwt = await token({ sub: 'rt', sid: serviceId, host: hostId });
    const client = await RpcClient.connect(registry.controller.wsUrl);
    expect((await client.call('service/register', register(serviceId, jwt))).result?.status).toBe('registered');
    const again = await client.call('service/register', register(serviceId, jwt, { port: 8444 }));
    expect(again.result?.status).toBe('registered');
    const { jwt: _omitted, ...withoutJwt } = register(serviceId, jwt, { port: 8445 });
    expect((await client.call('service/register', withoutJwt)).result?.status).toBe('registered');
    expect((await registry.table.byService(serviceId)).map((row) => row.port).sort()).toEqual([8443, 8444, 8445]);
    await client.close();
  });

  it('a registration whose params.jwt passed verification makes the socket verified, even when its params fail', async () => {
    const serviceId = unique('identity-params');
    const jwt = await token({ sub: 'rt', sid: serviceId, host: hostId });
    const client = await RpcClient.connect(registry.controller.wsUrl);
    const refused = await client.call('service/register', register(serviceId, jwt, { port: 'eighty' }));
    expect(refused.error?.code).toBe(-32602);
    // DESIGN 8: token, binding, then params; the token was verified, so the socket holds it from now on.
    const lookup = await client.call('discovery/lookup', { serviceId });
    expect(lookup.result).toMatchObject({ serviceId, nodes: [] });
    expect(client.socket.readyState).toBe(client.socket.OPEN);
    expect(await registry.table.byService(serviceId)).toEqual([]);
    await client.close();
  });
});
