import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { sameJson, type JsonValue } from '#database';
import { call, sqlDuring, startApi, unique, type TestApi } from '../support/api.js';
import { token } from '../support/tokens.js';

/**
 * Admin bodies are free-form maps: a name every object inherits (`toString`, `valueOf`, ...) is a name like
 * any other. The validation pipe's class-transformer used to drop such keys, storing `{}` for
 * `{"toString": "x"}` and leaving out a file called `toString` (found by sealed-values.property.spec.ts).
 * Keys named `__proto__`, `constructor` or `prototype`: Nest's ValidationPipe deletes them from a body, at any
 * depth and without a word. Inside a config value or as a file name they are data and are kept as sent
 * (DESIGN 17's round trip); anywhere else in a body they are fields no DTO declares: 400, before any SQL.
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

// Built from JSON text: in an object literal `__proto__` would set the prototype instead of a key.
const VALUE = JSON.parse(
  '{"constructor":{"prototype":1},"__proto__":[2,{"__proto__":null}],"prototype":"p","toString":"t"}',
) as JsonValue;
const json = (text: string): { payload: string; headers: Record<string, string> } => ({
  payload: text,
  headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
});

describe('keys named like prototypes', () => {
  it('inside a config value and as file names, are written, served and kept in history as sent', async () => {
    const host = unique('proto');
    const q = `host=${host}&serviceId=svc`;
    const properties = { 'app.value': VALUE, 'app.other': 1 };
    const put = await call(api, 'PUT', `/config-server/admin/properties?${q}`, { token: alice, body: { properties } });
    expect(put.statusCode).toBe(200);
    expect(sameJson(put.json<{ properties: JsonValue }>().properties, properties)).toBe(true);

    const runtime = await token({ sub: 'rt', scope: 'portal.r', host, sid: 'svc' });
    const served = await call(api, 'GET', `/config-server/configs?${q}`, { token: runtime });
    expect(served.statusCode).toBe(200);
    expect(sameJson(served.json<JsonValue>(), properties)).toBe(true);
    const v1 = await call(api, 'GET', `/config-server/admin/history/1?${q}`, { token: alice });
    expect(sameJson(v1.json<{ properties: JsonValue }>().properties, properties)).toBe(true);

    const files = await api.app.inject({
      method: 'PUT',
      url: `/config-server/admin/files?${q}&kind=file`,
      ...json('{"files":{"constructor":"AQI=","__proto__":"Aw==","prototype":"BA=="}}'),
    });
    expect(files.statusCode).toBe(200);
    const listed = await call(api, 'GET', `/config-server/admin/files?${q}&kind=file`, { token: alice });
    expect(Object.keys(listed.json<{ files: Record<string, string> }>().files).sort()).toEqual([
      '__proto__',
      'constructor',
      'prototype',
    ]);
    expect(JSON.parse(listed.body).files).toEqual(
      JSON.parse('{"__proto__":"Aw==","constructor":"AQI=","prototype":"BA=="}'),
    );
  });

  it.each([
    ['prototype', 'POST', '/tags', '{"tagName":"x","prototype":1}'],
    ['constructor', 'POST', '/tags', '{"tagName":"x","constructor":{"name":"y"}}'],
    ['__proto__', 'POST', '/tags', '{"tagName":"x","__proto__":{"tagDesc":"y"}}'],
    [
      'operations.0.constructor',
      'POST',
      '/tags/batch',
      '{"operations":[{"op":"add","entityType":"schema","entityId":"s","tagIds":["t"],"constructor":1}]}',
    ],
    [
      'prototype',
      'PUT',
      '/config-server/admin/properties?host=h&serviceId=s',
      '{"properties":{"a.b":1},"prototype":{}}',
    ],
  ] as const)(
    '%s anywhere else in a body is 400 naming it, before any SQL (%s %s)',
    async (field, method, url, body) => {
      const { result, queries } = await sqlDuring(() => api.app.inject({ method, url, ...json(body) }));
      expect(result.statusCode).toBe(400);
      const key = field.slice(field.lastIndexOf('.') + 1);
      expect(result.json<{ errors: unknown[] }>().errors).toEqual([
        { field, message: `property ${key} should not exist` },
      ]);
      expect(queries).toBe(0);
    },
  );
});
