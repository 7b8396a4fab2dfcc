import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, startApi, unique, type TestApi } from '../support/api.js';
import { token } from '../support/tokens.js';

/**
 * Issue 38 item 4: a signed `sub` or `host` holding NUL (or another control character) reached PostgreSQL,
 * which refuses NUL in text: a 500 on every write. Such characters are now U+FFFD in the caller's identity.
 */

let api: TestApi;
beforeAll(async () => {
  api = await startApi();
});
afterAll(() => api?.close());

describe('control characters in signed claims', () => {
  it.each(['\u0000', '\u0007', '\u007f'])('a sub holding %j writes, recorded with U+FFFD', async (c) => {
    const writer = await token({ sub: `ev${c}il`, scope: 'portal.admin' });
    const created = await call(api, 'POST', '/tags', { token: writer, body: { tagName: unique('nul') } });
    expect(created.statusCode).toBe(201);
    expect(created.json<{ updateUser: string }>().updateUser).toBe('ev\ufffdil');
    const host = unique('nulh');
    const layer = `/config-server/admin/properties?host=${host}&serviceId=svc`;
    const put = await call(api, 'PUT', layer, { token: writer, body: { properties: { 'a.b': 1 } } });
    expect(put.statusCode).toBe(200);
    const history = await call(api, 'GET', `/config-server/admin/history?host=${host}&serviceId=svc`, {
      token: writer,
    });
    expect(history.json<{ versions: { actor: string }[] }>().versions[0]?.actor).toBe('ev\ufffdil');
  });

  it('a sub holding a C1 character (text under DESIGN 3) is recorded as it is', async () => {
    const writer = await token({ sub: 'ev\u009bil', scope: 'portal.admin' });
    const created = await call(api, 'POST', '/tags', { token: writer, body: { tagName: unique('c1') } });
    expect([created.statusCode, created.json<{ updateUser: string }>().updateUser]).toEqual([201, 'ev\u009bil']);
  });

  it('a host holding NUL names no stored host: it reads global data only, never a 500', async () => {
    const reader = await token({ sub: 'r', scope: 'portal.r', host: 'h1\u0000' });
    const listed = await call(api, 'GET', '/tags?limit=5', { token: reader });
    expect(listed.statusCode).toBe(200);
    const hosts = listed.json<{ tags: { hostId: string | null }[] }>().tags.map((t) => t.hostId);
    expect(hosts.every((h) => h === null)).toBe(true);
    const events = await call(api, 'GET', '/events?limit=5', { token: reader });
    expect(events.statusCode).toBe(200);
  });
});
