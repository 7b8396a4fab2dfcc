import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, sqlDuring, startApi, unique, type TestApi } from '../support/api.js';
import { instanceIdOf, RpcClient, startController, type TestController } from '../support/controller.js';
import { callers, token, writeIssuerKeyFile } from '../support/tokens.js';

/**
 * Issue 38 items 1 and 2 and the capability scopes (DESIGN 16): a host-bound admin cannot become another
 * host through the issuer, nor see another host's registry; a capability token is judged by its capabilities.
 */

const h1 = unique('hb1');
const h2 = unique('hb2');
let api: TestApi;
let controller: TestController;
let admin: string;
let admin1: string;
const sockets: RpcClient[] = [];

beforeAll(async () => {
  api = await startApi({ TOKEN_ISSUER_KEY_FILE: writeIssuerKeyFile().file });
  controller = await startController({ CONTROLLER_HOST_ID: h2 });
  admin = await callers.admin();
  // A host's operator as DESIGN 10 creates one: the three broad scopes (portal.admin alone grants no config:read).
  admin1 = await token({ sub: 'admin-h1', scope: 'portal.r portal.w portal.admin', host: h1 });
}, 60_000);
afterAll(async () => {
  for (const socket of sockets) socket.socket.terminate();
  await controller?.close();
  await api?.close();
});

interface Client {
  readonly clientId: string;
  readonly clientSecret: string;
}

async function createClient(bearer: string, body: Record<string, unknown>) {
  return call(api, 'POST', '/oauth2/clients', { token: bearer, body: { envs: [], ...body } });
}

async function tokenStatus(client: Client): Promise<number> {
  const res = await api.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
    },
    payload: 'grant_type=client_credentials',
  });
  return res.statusCode;
}

describe('issuer clients under the host rule (item 1)', () => {
  it('refuses a client for another host before any SQL, and an operator client from a host-bound admin', async () => {
    const other = await sqlDuring(() => createClient(admin1, { host: h2, sid: 'svc', scopes: ['portal.r'] }));
    expect(other.result.statusCode).toBe(403);
    expect(other.queries).toBe(0);
    const operator = await sqlDuring(() => createClient(admin1, { scopes: ['portal.admin'] }));
    expect(operator.result.statusCode).toBe(403);
    expect(operator.queries).toBe(0);
    const own = await createClient(admin1, { host: h1, sid: 'svc', scopes: ['portal.r'] });
    expect(own.statusCode).toBe(201);
    expect(own.json<{ host: string }>().host).toBe(h1);
  });

  it('gives a client only scopes the host-bound admin holds, and refuses unknown scopes (400)', async () => {
    const narrow = await token({ sub: 'ca-h1', scope: 'clients:admin tags:read', host: h1 });
    const beyond = await createClient(narrow, { host: h1, sid: 'svc', scopes: ['tags:write'] });
    expect(beyond.statusCode).toBe(403);
    expect(beyond.json<{ detail: string }>().detail).toContain('tags:write');
    expect((await createClient(narrow, { host: h1, sid: 'svc', scopes: ['tags:read'] })).statusCode).toBe(201);
    const unknown = await createClient(admin, { host: h1, sid: 'svc', scopes: ['portal.r', 'portal.everything'] });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json<{ errors: { field: string }[] }>().errors[0]?.field).toBe('scopes');
  });

  it("neither lists, reads, rotates nor deletes another host's client; the owner's secret keeps working", async () => {
    const created = await createClient(admin, { host: h2, sid: 'svc', scopes: ['portal.r'] });
    const theirs = created.json<Client>();
    const mine = (await createClient(admin1, { host: h1, sid: 'svc', scopes: ['portal.r'] })).json<Client>();
    const listed = await call(api, 'GET', '/oauth2/clients?limit=1000', { token: admin1 });
    const ids = listed.json<{ clients: { clientId: string; host: string | null }[] }>().clients;
    expect(ids.map((c) => c.clientId)).toContain(mine.clientId);
    expect(ids.every((c) => c.host === h1)).toBe(true);
    expect((await call(api, 'GET', `/oauth2/clients/${theirs.clientId}`, { token: admin1 })).statusCode).toBe(404);
    const rotate = await call(api, 'POST', `/oauth2/clients/${theirs.clientId}/secret`, {
      token: admin1,
      body: { graceSec: 86400 },
    });
    expect(rotate.statusCode).toBe(404);
    expect(rotate.body).not.toContain('clientSecret');
    expect((await call(api, 'DELETE', `/oauth2/clients/${theirs.clientId}`, { token: admin1 })).statusCode).toBe(404);
    expect(await tokenStatus(theirs)).toBe(200);
    expect((await call(api, 'GET', `/oauth2/clients/${theirs.clientId}`, { token: admin })).statusCode).toBe(200);
  });
});

describe('the registry under the host rule (item 2)', () => {
  it("shows a host-bound admin only its host's instances, and refuses a query naming another host", async () => {
    const service = unique('hbsvc');
    const runtime = await token({ sub: 'rt', host: h2, sid: service });
    const socket = await RpcClient.connect(controller.wsUrl, { token: runtime });
    sockets.push(socket);
    const id = instanceIdOf(
      await socket.call('service/register', { serviceId: service, address: '10.5.5.5', port: 5 }),
    );
    for (const [base, app] of [
      ['/registry/instances', api],
      ['/instances', controller],
    ] as const) {
      const everyone = await call(app, 'GET', `${base}?serviceId=${service}`, { token: admin });
      expect(everyone.body).toContain(id);
      const mine = await call(app, 'GET', `${base}?serviceId=${service}`, { token: admin1 });
      expect(mine.statusCode).toBe(200);
      expect(mine.json()).toEqual({ total: 0, instances: [] });
      const named = await sqlDuring(() => call(app, 'GET', `${base}?hostId=${h2}`, { token: admin1 }));
      expect(named.result.statusCode).toBe(403);
      expect(named.queries).toBe(0);
    }
  });
});

describe('capability scopes (DESIGN 16)', () => {
  it('a tags:read token reads tags but not config, and names the missing capability', async () => {
    const reader = await token({ sub: 'cap', scope: 'tags:read', host: h1, sid: 'svc' });
    expect((await call(api, 'GET', '/tags', { token: reader })).statusCode).toBe(200);
    const { result, queries } = await sqlDuring(() =>
      call(api, 'GET', `/config-server/configs?host=${h1}&serviceId=svc`, { token: reader }),
    );
    expect(result.statusCode).toBe(403);
    expect(queries).toBe(0);
    expect(result.headers['www-authenticate']).toBe(
      'Bearer realm="bindery", error="insufficient_scope", scope="config:read"',
    );
    expect(result.json<{ detail: string }>().detail).toContain('config:read');
  });

  it('a tags:read token cannot register, though a token without scopes may (-32003, status 403)', async () => {
    const service = unique('capsvc');
    const reader = await token({ sub: 'cap', scope: 'tags:read', host: h2, sid: service });
    const refused = await RpcClient.connect(controller.wsUrl, { token: reader });
    sockets.push(refused);
    const answer = await refused.call('service/register', { serviceId: service, address: '10.6.6.6', port: 6 });
    expect(answer.error?.code).toBe(-32003);
    expect(answer.error?.data).toEqual({ status: 403 });
    expect(answer.error?.message).toContain('registry:register');
    const plain = await RpcClient.connect(controller.wsUrl, {
      token: await token({ sub: 'rt', host: h2, sid: service }),
    });
    sockets.push(plain);
    const registered = await plain.call('service/register', { serviceId: service, address: '10.6.6.6', port: 6 });
    expect(registered.result?.status).toBe('registered');
  });
});
