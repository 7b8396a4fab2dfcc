import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, sqlDuring, startApi, unique, type TestApi } from '../support/api.js';
import { RegistryTable, RpcClient, startController, type TestController } from '../support/controller.js';
import { callers, token } from '../support/tokens.js';

// One mechanism (libs/platform/validators.ts) for every text field: NUL and the other control characters
// are 400 over HTTP and -32602 over JSON-RPC, never a database error.
let api: TestApi;
let controller: TestController;
let table: RegistryTable;
let admin: string;

beforeAll(async () => {
  [api, controller] = await Promise.all([startApi(), startController()]);
  table = new RegistryTable();
  admin = await callers.admin();
});
afterAll(async () => {
  await Promise.all([api?.close(), controller?.close(), table?.end()]);
});

describe('HTTP: control characters are 400 naming the field', () => {
  it.each<[string, string, Record<string, unknown>, string]>([
    ['a NUL in tagName', '/tags', { tagName: 'a\u0000b' }, 'tagName'],
    ['a NUL in tagDesc', '/tags', { tagName: unique('t'), tagDesc: 'x\u0000' }, 'tagDesc'],
    ['an escape in tagDesc', '/tags', { tagName: unique('t'), tagDesc: 'x\u001b[31m' }, 'tagDesc'],
    ['a line feed in tagName', '/tags', { tagName: 'a\nb' }, 'tagName'],
    ['a NUL in hostId', '/tags', { tagName: unique('t'), hostId: 'h\u0000' }, 'hostId'],
    ['a NUL in schemaBody', '/schemas', { schemaName: 'n', schemaBody: '{\u0000}' }, 'schemaBody'],
    ['a DEL in productVersion', '/products', { productName: 'n', productVersion: '1\u007f' }, 'productVersion'],
  ])('%s', async (_, path, body, field) => {
    const { result, queries } = await sqlDuring(() => call(api, 'POST', path, { token: admin, body }));
    expect(result.statusCode).toBe(400);
    const errors = result.json<{ errors: { field: string }[] }>().errors;
    expect(errors.map((e) => e.field)).toContain(field);
    expect(queries).toBe(0);
  });

  it('free text keeps tab, line feed and carriage return', async () => {
    const res = await call(api, 'POST', '/tags', {
      token: admin,
      body: { tagName: unique('t'), tagDesc: 'line one\r\n\tline two' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json<{ tagDesc: string }>().tagDesc).toBe('line one\r\n\tline two');
  });
});

describe('JSON-RPC: control characters are -32602 and nothing is stored', () => {
  it.each<[string, string, Record<string, unknown>, string]>([
    ['a NUL in address', 'service/register', { address: '10.0.0.1\u0000' }, 'address'],
    ['a NUL in a tag value', 'service/register', { tags: { zone: 'a\u0000' } }, 'tags'],
    ['a NUL in a lookup envTag', 'discovery/lookup', { envTag: 'dev\u0000' }, 'envTag'],
  ])('%s', async (_, method, extra, field) => {
    const serviceId = unique('cc');
    const client = await RpcClient.connect(controller.wsUrl, {
      token: await token({ sid: serviceId, host: controller.hostId }),
    });
    try {
      const response = await client.call(method, { serviceId, ...extra });
      expect(response.error).toMatchObject({ code: -32602, data: { status: 400 } });
      const errors = response.error?.data?.errors as { field: string }[];
      expect(errors.map((e) => e.field)).toContain(field);
      expect(await table.byService(serviceId)).toEqual([]);
    } finally {
      await client.close();
    }
  });
});
