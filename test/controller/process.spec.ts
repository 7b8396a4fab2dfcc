import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { migrate } from '#database';
import { unique } from '../support/api.js';
import { instanceIdOf, RegistryTable, RpcClient, WS_PATH } from '../support/controller.js';
import { freePort, startBuilt, type Spawned } from '../support/processes.js';
import { token } from '../support/tokens.js';

/** The built controller as operators run it: `node dist/apps/controller/main.js`. */
describe('controller process', () => {
  let controller: Spawned;
  let port: number;
  let table: RegistryTable;
  const hostId = unique('proc');

  beforeAll(async () => {
    await migrate(process.env.DATABASE_SESSION_URL || (process.env.DATABASE_URL ?? ''));
    table = new RegistryTable();
    port = await freePort();
    controller = await startBuilt('apps/controller/main.js', port, {
      CONTROLLER_PORT: String(port),
      CONTROLLER_HOST_ID: hostId,
    });
  });

  afterAll(async () => {
    controller?.child.kill('SIGKILL');
    await table?.end();
  });

  it('registers over the shared HTTP port, then SIGTERM closes sockets with 1001, disconnects and exits 0', async () => {
    const serviceId = unique('svc');
    const url = `ws://127.0.0.1:${port}${WS_PATH}`;
    const client = await RpcClient.connect(url, { token: await token({ sid: serviceId, host: hostId }) });
    const response = await client.call('service/register', { serviceId, address: '10.0.0.1', port: 8080, extra: 1 });
    const id = instanceIdOf(response);
    expect((await client.call('discovery/lookup', { serviceId })).result?.nodes).toHaveLength(1);
    expect((await client.call('service/register', { serviceId, port: 'x' })).error?.code).toBe(-32602);
    expect((await table.byId(id))?.status).toBe('connected');

    controller.child.kill('SIGTERM');
    expect(await client.waitClosed()).toEqual({ code: 1001, reason: 'Server shutting down' });
    expect(await controller.exit()).toBe(0);
    expect((await table.byId(id))?.status).toBe('disconnected');
  }, 60_000);
});
