import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BAD_TOKENS } from '../support/bad-tokens.js';
import {
  RegistryTable,
  RpcClient,
  startController,
  statementsDuring,
  UpgradeRefused,
  type TestController,
} from '../support/controller.js';
import { token } from '../support/tokens.js';

/** BAD_TOKENS on the WebSocket transport (the HTTP side runs it in test/auth/bad-tokens.spec.ts). */
let controller: TestController;
let table: RegistryTable;

beforeAll(async () => {
  // The table's tokens are bound to this host, so only their badness can refuse them.
  controller = await startController({ CONTROLLER_HOST_ID: 'bad-token-host' });
  table = new RegistryTable();
});

afterAll(async () => {
  await controller?.close();
  await table?.end();
});

describe('a bad token in the upgrade header is refused with HTTP 401 invalid_token, and no SQL runs', () => {
  it.each(BAD_TOKENS)('%s', async (_, make) => {
    const bad = await make();
    const { result: error, all } = await statementsDuring(() =>
      RpcClient.connect(controller.wsUrl, { token: bad }).then(
        () => undefined,
        (e: unknown) => e,
      ),
    );
    expect(error).toBeInstanceOf(UpgradeRefused);
    expect((error as UpgradeRefused).status).toBe(401);
    expect((error as UpgradeRefused).headers['www-authenticate']).toBe('Bearer realm="bindery", error="invalid_token"');
    expect(all).toEqual([]);
  });
});

describe('a bad token in service/register params.jwt is -32001, closed 1008, nothing stored, no SQL', () => {
  it.each(BAD_TOKENS)('%s', async (_, make) => {
    const bad = await make();
    const { result, all } = await statementsDuring(async () => {
      const client = await RpcClient.connect(controller.wsUrl);
      const response = await client.call('service/register', { serviceId: 'bad-token-svc', port: 1, jwt: bad });
      return { response, closed: await client.waitClosed() };
    });
    expect(result.response.error).toEqual({ code: -32001, message: 'Unauthorized', data: { status: 401 } });
    expect(result.closed).toEqual({ code: 1008, reason: 'Unauthorized' });
    expect(all).toEqual([]);
    expect(await table.byService('bad-token-svc')).toEqual([]);
  });
});

describe('a bad token in session/refresh is -32001 and closes the socket', () => {
  it.each(BAD_TOKENS)('%s', async (_, make) => {
    const bad = await make();
    const good = await token({ sub: 'rt', sid: 'refresher', host: controller.hostId });
    const client = await RpcClient.connect(controller.wsUrl, { token: good });
    const { result: response, all } = await statementsDuring(() => client.call('session/refresh', { jwt: bad }));
    expect(response.error).toMatchObject({ code: -32001, data: { status: 401 } });
    expect((await client.waitClosed()).code).toBe(1008);
    expect(all).toEqual([]);
  });
});
