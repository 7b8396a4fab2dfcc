import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { migrate } from '#database';
import { unique } from '../support/api.js';
import { RegistryTable, RpcClient, WS_PATH } from '../support/controller.js';
import { freePort, startBuilt, type Spawned } from '../support/processes.js';
import { callers, token } from '../support/tokens.js';

/**
 * Issue 41: a session of the upstream runtime, frame for frame as its client's own fixture records it
 * (`service/register` with `params.jwt`, a `service/update_metadata` notification, a `log` notification,
 * `service/deregister` with a `reason`), replayed against the built controller as operators run it.
 */
const hostId = unique('upstream-host');
let controller: Spawned;
let httpUrl: string;
let wsUrl: string;
let table: RegistryTable;

beforeAll(async () => {
  await migrate(process.env.DATABASE_SESSION_URL || (process.env.DATABASE_URL ?? ''));
  const port = await freePort();
  controller = await startBuilt('apps/controller/main.js', port, {
    CONTROLLER_PORT: String(port),
    CONTROLLER_HOST_ID: hostId,
  });
  httpUrl = `http://127.0.0.1:${port}`;
  wsUrl = `ws://127.0.0.1:${port}${WS_PATH}`;
  table = new RegistryTable();
}, 60_000);

afterAll(async () => {
  controller?.child.kill('SIGKILL');
  await table?.end();
});

describe('the upstream runtime’s session', () => {
  it('answers exactly the requests; lookups and /instances show the updated version, port, protocol and tags', async () => {
    const serviceId = unique('upstream');
    const jwt = await token({ sub: 'runtime', sid: serviceId, host: hostId, env: 'prod' });
    // The upstream client sends no Authorization header: its token travels in params.jwt.
    const client = await RpcClient.connect(wsUrl, {});
    const address = '10.41.5.5';
    const register = {
      jsonrpc: '2.0',
      id: 1,
      method: 'service/register',
      params: {
        serviceId,
        envTag: 'prod',
        version: '1.0.0',
        protocol: 'http',
        address,
        port: 8443,
        tags: { zone: 'a' },
        jwt,
      },
    };
    const frames = [
      JSON.stringify(register),
      '{"jsonrpc":"2.0","method":"service/update_metadata","params":{"version":"1.0.1","protocol":"https","port":8444,"tags":{"zone":"b"}}}',
      '{"jsonrpc":"2.0","method":"log","params":{"level":"INFO","logger":"runtime","message":"metadata updated"}}',
    ];
    // Back to back, as a recording replays them: the notifications act after the registration they follow.
    for (const frame of frames) client.sendRaw(frame);
    const registered = await client.response((r) => r.id === 1, 'the registration answer');
    const runtimeInstanceId = registered.result?.runtimeInstanceId as string;
    expect(registered).toEqual({ jsonrpc: '2.0', id: 1, result: { runtimeInstanceId, status: 'registered' } });

    const node = {
      runtimeInstanceId,
      envTag: 'prod',
      version: '1.0.1',
      protocol: 'https',
      address,
      port: 8444,
      tags: { zone: 'b' },
    };
    const lookup = await client.call('discovery/lookup', { serviceId, envTag: 'prod' }, 2);
    expect(lookup).toEqual({ jsonrpc: '2.0', id: 2, result: { serviceId, envTag: 'prod', nodes: [node] } });
    const listed = await fetch(`${httpUrl}/instances?hostId=${hostId}&serviceId=${serviceId}`, {
      headers: { authorization: `Bearer ${await callers.admin()}` },
    });
    expect(listed.status).toBe(200);
    expect(await listed.json()).toMatchObject({ total: 1, instances: [{ ...node, hostId, status: 'connected' }] });

    const deregister = { runtimeInstanceId, reason: 'shutdown requested by the platform' };
    const left = await client.call('service/deregister', deregister, 3);
    expect(left).toEqual({ jsonrpc: '2.0', id: 3, result: { runtimeInstanceId, status: 'deregistered' } });
    // Exactly three frames came back, one per request, in the order asked: nothing for the notifications.
    expect(client.received).toEqual([registered, lookup, left]);
    expect(await table.byId(runtimeInstanceId)).toMatchObject({
      version: '1.0.1',
      protocol: 'https',
      port: 8444,
      tags: { zone: 'b' },
      status: 'deregistered',
    });
    expect(client.socket.readyState).toBe(client.socket.OPEN);
    await client.close();
  });
});
