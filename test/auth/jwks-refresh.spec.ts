import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, sqlDuring, startApi, unique, type TestApi } from '../support/api.js';
import {
  instanceIdOf,
  RegistryTable,
  RpcClient,
  startController,
  statementsDuring,
  UpgradeRefused,
  waitFor,
  type TestController,
} from '../support/controller.js';
import { JwksServer, signingKey } from '../support/jwks-server.js';
import { token } from '../support/tokens.js';

/**
 * DESIGN 6.1: the JWKS is re-read every JWT_JWKS_REFRESH_SEC, and a key that left it is refused from then
 * on by both processes, tokens each has already verified and remembered included.
 */
const PATH = '/jwks.json';
const gone = signingKey('k-gone');
const stays = signingKey('k-stays');
// One JWKS server per process, so what one test drops is not still missing for the other's process.
let apiJwks: JwksServer;
let controllerJwks: JwksServer;
let api: TestApi;
let controller: TestController;
let table: RegistryTable;

beforeAll(async () => {
  apiJwks = await JwksServer.start([gone, stays]);
  controllerJwks = await JwksServer.start([gone, stays]);
  const env = (jwks: JwksServer) => ({
    JWT_JWKS_FILE: '',
    JWT_JWKS_URI: jwks.url(PATH),
    JWT_JWKS_REFRESH_SEC: '1',
  });
  api = await startApi(env(apiJwks));
  controller = await startController(env(controllerJwks));
  table = new RegistryTable();
});

afterAll(async () => {
  await controller?.close();
  await api?.close();
  await table?.end();
  await apiJwks?.close();
  await controllerJwks?.close();
});

describe('a key dropped from the JWKS', () => {
  it('is refused by the api after the next re-read (401, no SQL), a remembered token included', async () => {
    const reader = (key: typeof gone) => token({ sub: 'r', scope: 'portal.r' }, { key });
    const [dropped, kept] = [await reader(gone), await reader(stays)];
    // Twice each: the second answer comes from the verification cache.
    for (const jwt of [dropped, dropped, kept, kept]) {
      expect((await call(api, 'GET', '/tags?limit=1', { token: jwt })).statusCode).toBe(200);
    }
    apiJwks.serve([stays]);
    await apiJwks.applied(PATH);
    const { result: refused, queries } = await sqlDuring(() => call(api, 'GET', '/tags?limit=1', { token: dropped }));
    expect(refused.statusCode).toBe(401);
    expect(refused.headers['www-authenticate']).toBe('Bearer realm="bindery", error="invalid_token"');
    expect(queries).toBe(0);
    // A token of the key that stayed is still served, from the cache it was remembered in.
    expect((await call(api, 'GET', '/tags?limit=1', { token: kept })).statusCode).toBe(200);
    // A new token of the dropped key is refused too.
    expect((await call(api, 'GET', '/tags?limit=1', { token: await reader(gone) })).statusCode).toBe(401);
  });

  it('is refused by the controller: the next call on an open socket is -32001 and 1008, a new upgrade 401', async () => {
    const serviceId = unique('jwks-svc');
    const runtime = (key: typeof gone) => token({ sub: 'rt', sid: serviceId, host: controller.hostId }, { key });
    const dropped = await runtime(gone);
    const open = await RpcClient.connect(controller.wsUrl, { token: dropped });
    const id = instanceIdOf(await open.call('service/register', { serviceId, address: '10.7.0.1', port: 1 }));
    // The token is now remembered: calls on the socket are served from the verification cache.
    const { result: served, all: lookupSql } = await statementsDuring(() =>
      open.call('discovery/lookup', { serviceId }),
    );
    expect(served.result).toBeDefined();
    const readsRegistry = (sql: string) => /^\s*select/i.test(sql) && sql.includes('runtime_instance');
    expect(lookupSql.some(readsRegistry)).toBe(true);
    const keptSocket = await RpcClient.connect(controller.wsUrl, { token: await runtime(stays) });
    expect((await keptSocket.call('discovery/lookup', { serviceId })).result).toBeDefined();

    controllerJwks.serve([stays]);
    await controllerJwks.applied(PATH);
    const { result, all } = await statementsDuring(async () => {
      const response = await open.call('discovery/lookup', { serviceId });
      return { response, closed: await open.waitClosed() };
    });
    expect(result.response.error).toEqual({ code: -32001, message: 'Unauthorized', data: { status: 401 } });
    expect(result.closed).toEqual({ code: 1008, reason: 'Unauthorized' });
    // The refused lookup read nothing (the close's own disconnect write and lease renewals may land here).
    expect(all.filter(readsRegistry)).toEqual([]);
    // Closing the socket disconnected its instance, as any close does.
    await waitFor(async () => (await table.byId(id))?.status === 'disconnected', 'the instance to be disconnected');

    const upgrade = await RpcClient.connect(controller.wsUrl, { token: dropped }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(upgrade).toBeInstanceOf(UpgradeRefused);
    expect((upgrade as UpgradeRefused).status).toBe(401);
    // The socket of the key that stayed keeps working.
    expect((await keptSocket.call('discovery/lookup', { serviceId })).result).toBeDefined();
    await keptSocket.close();
  });
});
