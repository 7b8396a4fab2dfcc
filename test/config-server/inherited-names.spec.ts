import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, startApi, unique, type TestApi } from '../support/api.js';
import { token } from '../support/tokens.js';

/**
 * Admin bodies are free-form maps: a name every object inherits (`toString`, `valueOf`, ...) is a name like
 * any other. The validation pipe's class-transformer used to drop such keys, storing `{}` for
 * `{"toString": "x"}` and leaving out a file called `toString` (found by sealed-values.property.spec.ts).
 */
let api: TestApi;
let alice: string;

beforeAll(async () => {
  api = await startApi({ LOG_LEVEL: 'silent' });
  alice = await token({ sub: 'alice', scope: 'portal.admin' });
});
afterAll(() => api.close());

describe('inherited names in admin bodies', () => {
  it('keeps nested property names such as toString and valueOf', async () => {
    const q = `host=${unique('inh')}&serviceId=svc`;
    const properties = { 'a.map': { toString: 'x', valueOf: 1, hasOwnProperty: [true], isPrototypeOf: null } };
    const put = await call(api, 'PUT', `/config-server/admin/properties?${q}`, { token: alice, body: { properties } });
    expect(put.statusCode).toBe(200);
    expect(put.json<{ properties: unknown }>().properties).toEqual(properties);
    const read = await call(api, 'GET', `/config-server/admin/properties?${q}`, { token: alice });
    expect(read.json<{ properties: unknown }>().properties).toEqual(properties);
  });

  it('keeps a file called toString', async () => {
    const q = `host=${unique('inh')}&serviceId=svc&kind=file`;
    const files = { toString: Buffer.from('one').toString('base64'), valueOf: Buffer.from('two').toString('base64') };
    const put = await call(api, 'PUT', `/config-server/admin/files?${q}`, { token: alice, body: { files } });
    expect(put.statusCode).toBe(200);
    const read = await call(api, 'GET', `/config-server/admin/files?${q}`, { token: alice });
    expect(JSON.stringify(read.json())).toContain('"toString"');
    expect(JSON.stringify(read.json())).toContain('"valueOf"');
  });
});
