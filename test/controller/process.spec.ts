import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { migrate } from '#database';
import { unique } from '../support/api.js';
import { instanceIdOf, RegistryTable, RpcClient, waitFor, WS_PATH } from '../support/controller.js';
import { freePort, requireBuild, run, type Spawned } from '../support/processes.js';
import { ISSUER, token, writeJwksFile } from '../support/tokens.js';

/** The built controller as operators run it: `node dist/apps/controller/main.js`. */
describe('controller process', () => {
  let controller: Spawned;
  let port: number;
  let table: RegistryTable;
  const hostId = unique('proc');

  beforeAll(async () => {
    requireBuild();
    await migrate(process.env.DATABASE_URL ?? '');
    table = new RegistryTable();
    port = await freePort();
    controller = run('apps/controller/main.js', [], {
      DATABASE_URL: process.env.DATABASE_URL ?? '',
      CONTROLLER_PORT: String(port),
      LISTEN_HOST: '127.0.0.1',
      JWT_JWKS_FILE: writeJwksFile(),
      JWT_ISSUER: ISSUER,
      CONTROLLER_HOST_ID: hostId,
      LOG_LEVEL: 'warn',
    });
    await waitFor(
      () =>
        fetch(`http://127.0.0.1:${port}/health/ready`).then(
          (r) => r.ok,
          () => false,
        ),
      `the controller to start:\n${controller.output()}`,
      30_000,
    );
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
    expect((await client.call('service/register', { serviceId: 5 })).error?.code).toBe(-32602);
    expect((await table.byId(id))?.status).toBe('connected');

    controller.child.kill('SIGTERM');
    expect(await client.waitClosed()).toEqual({ code: 1001, reason: 'Server shutting down' });
    expect(await controller.exit()).toBe(0);
    expect((await table.byId(id))?.status).toBe('disconnected');
  }, 60_000);
});
