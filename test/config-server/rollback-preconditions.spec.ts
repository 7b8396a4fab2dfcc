import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, sqlDuring, startApi, unique, type TestApi } from '../support/api.js';
import { token } from '../support/tokens.js';

/** DESIGN 14 and 3 (issue 38, items 4 and 6): rollback's If-Match and version, and the history version path. */
let api: TestApi;
let alice: string;

beforeAll(async () => {
  api = await startApi({ LOG_LEVEL: 'silent' });
  alice = await token({ sub: 'alice', scope: 'portal.admin' });
});
afterAll(async () => {
  await api?.close();
});

/** A layer at version 2 (x.a 1, then 2), so a rollback to 1 would change it. */
async function layerAtVersion2(): Promise<string> {
  const q = `host=${unique('rbp')}&serviceId=svc`;
  for (const value of [1, 2]) {
    const res = await call(api, 'PUT', `/config-server/admin/properties?${q}`, {
      token: alice,
      body: { properties: { 'x.a': value } },
    });
    expect(res.statusCode).toBe(200);
  }
  return q;
}

const rollback = (q: string, version: string, ifMatch?: string) =>
  call(api, 'POST', `/config-server/admin/rollback?${q}&version=${version}`, {
    token: alice,
    headers: ifMatch === undefined ? {} : { 'if-match': ifMatch },
  });

/** The layer's ETag and values, and its number of versions: what a refused rollback must leave as it was. */
async function state(q: string): Promise<unknown> {
  const props = await call(api, 'GET', `/config-server/admin/properties?${q}`, { token: alice });
  const history = await call(api, 'GET', `/config-server/admin/history?${q}`, { token: alice });
  return { etag: props.headers.etag, properties: props.json(), total: history.json<{ total: number }>().total };
}

describe('rollback If-Match', () => {
  it('* is 428 like a missing header, before any SQL, and changes nothing', async () => {
    const q = await layerAtVersion2();
    const before = await state(q);
    for (const ifMatch of ['*', ' * ', undefined, '']) {
      const { result, queries } = await sqlDuring(() => rollback(q, '1', ifMatch));
      expect([ifMatch, result.statusCode]).toEqual([ifMatch, 428]);
      expect(result.headers['content-type']).toContain('application/problem+json');
      expect(result.json<{ status: number }>().status).toBe(428);
      expect(queries).toBe(0);
    }
    expect(await state(q)).toEqual(before);
  });

  it('a well-formed entity-tag that does not match is 412, whatever it holds, and changes nothing', async () => {
    const q = await layerAtVersion2();
    const before = await state(q);
    for (const ifMatch of ['"abc"', 'W/"02"', 'W/"99999999999"', '"2,3"', '""', 'W/"1", "x"', '"\u00e9"']) {
      const res = await rollback(q, '1', ifMatch);
      expect([ifMatch, res.statusCode]).toEqual([ifMatch, 412]);
      expect(res.json<{ detail: string }>().detail).toContain('version 2');
    }
    expect(await state(q)).toEqual(before);
  });

  it('a malformed header is 400 before any SQL; a list that holds the current version rolls back', async () => {
    const q = await layerAtVersion2();
    for (const ifMatch of ['2', 'w/"2"', '"2', '"1" "2"', '*, W/"2"', '"a b"']) {
      const { result, queries } = await sqlDuring(() => rollback(q, '1', ifMatch));
      expect([ifMatch, result.statusCode]).toEqual([ifMatch, 400]);
      expect(result.json<{ detail: string }>().detail).toContain('If-Match');
      expect(queries).toBe(0);
    }
    const res = await rollback(q, '1', '"abc", , W/"2"');
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe('W/"3"');
    expect(res.json()).toMatchObject({ version: 3, properties: { 'x.a': 1 } });
  });
});

describe('version beyond 32 bits', () => {
  it('is 400 naming version on rollback and on the history path, before any SQL', async () => {
    const q = await layerAtVersion2();
    const before = await state(q);
    for (const version of ['2147483648', '4294967297', '9999999999']) {
      const sent = [
        () => rollback(q, version, 'W/"2"'),
        () => call(api, 'GET', `/config-server/admin/history/${version}?${q}`, { token: alice }),
      ];
      for (const send of sent) {
        const { result, queries } = await sqlDuring(send);
        expect([version, result.statusCode]).toEqual([version, 400]);
        expect(result.json<{ errors: { field: string }[] }>().errors.map((e) => e.field)).toEqual(['version']);
        expect(queries).toBe(0);
      }
    }
    // The largest 32-bit version is a number the database can look for: never kept here, so 404.
    expect((await rollback(q, '2147483647', 'W/"2"')).statusCode).toBe(404);
    expect((await call(api, 'GET', `/config-server/admin/history/2147483647?${q}`, { token: alice })).statusCode).toBe(
      404,
    );
    expect(await state(q)).toEqual(before);
  });
});
