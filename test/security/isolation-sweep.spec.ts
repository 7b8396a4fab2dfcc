import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { CAPABILITIES } from '#platform';
import { call, startApi, unique, type TestApi } from '../support/api.js';
import {
  instanceIdOf,
  RpcClient,
  startController,
  waitFor,
  type RpcResponse,
  type TestController,
} from '../support/controller.js';
import { messageNames, type RouteRecord } from '../support/route-table.js';
import { callers, token, writeIssuerKeyFile } from '../support/tokens.js';
import {
  hostOneCallers,
  leaked,
  rowsMentioning,
  send,
  urlsOf,
  type Caller,
  type SweepRequest,
} from './sweep-support.js';

/**
 * DESIGN 16's isolation sweep: fixtures in two hosts, every route of both applications (walked from their
 * own route tables, so a new route is swept without editing this file) and every JSON-RPC method, called by
 * every kind of host-1 caller. No answer may show host 2's ids, names, addresses, values or events that
 * the request did not itself send, and host 2's rows must be exactly as they were.
 */

const h1 = unique('swh1');
const h2 = unique('swh2');
const s1 = unique('sws1');
const s2 = unique('sws2');
const secret2 = unique('sw2secret');
const ENTITY_TYPES = [
  { path: 'schemas', type: 'schema', idField: 'schemaId', name: (n: string) => ({ schemaName: n }) },
  { path: 'products', type: 'product', idField: 'productId', name: (n: string) => ({ productName: n }) },
  { path: 'documents', type: 'document', idField: 'documentId', name: (n: string) => ({ title: n }) },
] as const;

let api: TestApi;
let controller1: TestController;
let controller2: TestController;
let db: DataSource;
let admin: string;
/** Host 2's markers, and the global operator client (no host-bound admin may see it either). */
const markers: string[] = [h2, s2, secret2];
const ids: Record<string, string> = {};
const sockets: RpcClient[] = [];

async function ok<T>(status: number, promise: ReturnType<typeof call>): Promise<T> {
  const res = await promise;
  if (res.statusCode !== status) throw new Error(`fixture: ${res.statusCode} ${res.body}`);
  return res.json<T>();
}

async function fixtures(): Promise<void> {
  // A global tag that host 2's entities carry: a host-1 admin may write global tags, never host 2's links.
  const shared = await ok<{ tagId: string }>(
    201,
    call(api, 'POST', '/tags', { token: admin, body: { tagName: unique('swshared') } }),
  );
  ids.tagShared = shared.tagId;
  for (const [host, suffix] of [
    [h1, '1'],
    [h2, '2'],
  ] as const) {
    const tag = await ok<{ tagId: string; tagName: string }>(
      201,
      call(api, 'POST', '/tags', { token: admin, body: { tagName: unique(`swtag${suffix}`), hostId: host } }),
    );
    ids[`tag${suffix}`] = tag.tagId;
    if (suffix === '2') markers.push(tag.tagId, tag.tagName);
    for (const def of ENTITY_TYPES) {
      const name = unique(`sw${def.type}${suffix}`);
      const tagIds = suffix === '2' ? [tag.tagId, shared.tagId] : [tag.tagId];
      const body = { ...def.name(name), hostId: host, tagIds };
      const entity = await ok<Record<string, string>>(201, call(api, 'POST', `/${def.path}`, { token: admin, body }));
      ids[`${def.type}${suffix}`] = entity[def.idField] ?? '';
      if (suffix === '2') markers.push(entity[def.idField] ?? '', name);
    }
    const service = suffix === '1' ? s1 : s2;
    const layer = `/config-server/admin/properties?host=${host}&serviceId=${service}&envTag=prod`;
    for (const value of ['first', suffix === '2' ? secret2 : 'own-value']) {
      await ok(200, call(api, 'PUT', layer, { token: admin, body: { properties: { 'db.password': value } } }));
    }
    const files = `/config-server/admin/files?host=${host}&serviceId=${service}&kind=file`;
    const fileName = unique(`swfile${suffix}`);
    const content = Buffer.from(unique(`swcontent${suffix}`)).toString('base64');
    await ok(200, call(api, 'PUT', files, { token: admin, body: { files: { [fileName]: content } } }));
    const description = unique(`swdesc${suffix}`);
    const client = await ok<{ clientId: string }>(
      201,
      call(api, 'POST', '/oauth2/clients', {
        token: admin,
        body: { host, sid: service, envs: ['prod'], scopes: ['portal.r'], description },
      }),
    );
    ids[`client${suffix}`] = client.clientId;
    if (suffix === '2') markers.push(fileName, content, description, client.clientId);
  }
  const operator = await ok<{ clientId: string }>(
    201,
    call(api, 'POST', '/oauth2/clients', { token: admin, body: { scopes: ['portal.admin'], envs: [] } }),
  );
  markers.push(operator.clientId);
  for (const [controller, host, service, suffix] of [
    [controller1, h1, s1, '1'],
    [controller2, h2, s2, '2'],
  ] as const) {
    const runtime = await token({ sub: `rt${suffix}`, scope: 'portal.r', host, sid: service, env: 'prod' });
    const socket = await RpcClient.connect(controller.wsUrl, { token: runtime });
    sockets.push(socket);
    const address = `10.9${suffix}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
    const zone = unique(`swzone${suffix}`);
    const registered = await socket.call('service/register', {
      serviceId: service,
      envTag: 'prod',
      address,
      port: 8443,
      protocol: 'https',
      tags: { zone },
    });
    ids[`instance${suffix}`] = instanceIdOf(registered);
    if (suffix === '2') markers.push(ids.instance2 ?? '', address, zone);
  }
}

beforeAll(async () => {
  api = await startApi({ TOKEN_ISSUER_KEY_FILE: writeIssuerKeyFile().file });
  db = api.app.get(DataSource);
  controller1 = await startController({ CONTROLLER_HOST_ID: h1 });
  controller2 = await startController({ CONTROLLER_HOST_ID: h2 });
  admin = await callers.admin();
  await fixtures();
}, 60_000);

afterAll(async () => {
  for (const socket of [...sockets, ...RpcClientsOpened]) socket.socket.terminate();
  await controller1?.close();
  await api?.close();
});

const RpcClientsOpened: RpcClient[] = [];

/** Path parameters: host 2's resource of the route's kind, then host 1's. */
function pathValues(route: RouteRecord, param: string): readonly string[] {
  const kind = route.url.split('/')[1] ?? '';
  const entity = ENTITY_TYPES.find((def) => def.path === kind);
  if (param === 'tagId') return [ids.tag2 ?? '', ids.tag1 ?? '', ids.tagShared ?? ''];
  if (param === 'clientId') return [ids.client2 ?? '', ids.client1 ?? ''];
  if (param === 'version') return ['1', '2'];
  if (param === 'file') return ['index.html'];
  if (entity !== undefined) return [ids[`${entity.type}2`] ?? '', ids[`${entity.type}1`] ?? ''];
  return [h2, h1];
}

/** Queries every route is tried with: none, naming host 2's things, naming host 1's own. */
const QUERIES = [
  '',
  `?host=${h2}&serviceId=${s2}&envTag=prod&version=1`,
  `?host=${h2}&serviceId=${s2}&kind=file`,
  `?hostId=${h2}&include=usage`,
  `?host=${h1}&serviceId=${s1}&envTag=prod&version=1`,
];

/** Bodies for writes: each names host 2 or its resources in another way, or is a plain write of host 1. */
function bodiesFor(route: RouteRecord): unknown[] {
  const fresh = (): string => unique('swnew');
  const kind = route.url.split('/')[1] ?? '';
  const entity = ENTITY_TYPES.find((def) => def.path === kind);
  if (route.url === '/tags/batch') {
    const op = (entityType: string, entityId: string, tagId: string) => [
      { op: 'add', entityType, entityId, tagIds: [tagId] },
      { op: 'remove', entityType, entityId, tagIds: [tagId] },
    ];
    return [
      {
        operations: [
          ...op('schema', ids.schema2 ?? '', ids.tag1 ?? ''),
          ...op('schema', ids.schema1 ?? '', ids.tag2 ?? ''),
        ],
      },
    ];
  }
  if (kind === 'tags')
    return [{ tagName: fresh(), hostId: h2 }, { tagName: fresh(), hostId: h1 }, { tagName: fresh() }];
  if (entity !== undefined) {
    return [
      { ...entity.name(fresh()), hostId: h2 },
      { ...entity.name(fresh()), hostId: h1, tagIds: [ids.tag2] },
      { tagIds: [ids.tag2] },
      { ...entity.name(fresh()), hostId: h1 },
    ];
  }
  if (route.url.startsWith('/config-server/admin/properties')) return [{ properties: { 'sweep.key': fresh() } }];
  if (route.url.startsWith('/config-server/admin/files')) return [{ files: { 'sweep.txt': 'c3dlZXA=' } }];
  if (route.url === '/oauth2/clients') {
    return [
      { host: h2, sid: s2, envs: [], scopes: ['portal.r'] },
      { envs: [], scopes: ['portal.admin'] },
      { host: h1, sid: s1, envs: [], scopes: ['portal.r'] },
    ];
  }
  if (route.url.endsWith('/secret')) return [{ graceSec: 86400 }];
  return [{}, { hostId: h2, host: h2 }];
}

function requestsOf(route: RouteRecord): SweepRequest[] {
  const headers = { 'if-match': '*', 'content-type': 'application/json' };
  const urls = urlsOf(route, pathValues, QUERIES);
  if (route.method === 'GET' || route.method === 'DELETE') {
    return urls.map((url) => ({ method: route.method, url, headers: route.method === 'GET' ? {} : headers }));
  }
  return urls.flatMap((url) => bodiesFor(route).map((body) => ({ method: route.method, url, body, headers })));
}

interface Finding {
  readonly caller: string;
  readonly request: string;
  readonly detail: string;
}

async function sweepHttp(app: Pick<TestApi, 'app'>, routes: readonly RouteRecord[], who: readonly Caller[]) {
  const findings: Finding[] = [];
  let requests = 0;
  for (const route of routes) {
    for (const request of requestsOf(route)) {
      for (const caller of who) {
        const answer = await send(app, request, caller.token);
        requests++;
        const where = `${request.method} ${request.url} ${JSON.stringify(request.body ?? '')}`;
        if (answer.status >= 500) findings.push({ caller: caller.name, request: where, detail: `${answer.status}` });
        const shown = leaked(markers, request, answer);
        if (shown.length > 0)
          findings.push({ caller: caller.name, request: where, detail: `shows ${shown.join(', ')}` });
      }
    }
  }
  return { findings, requests };
}

/** Params every JSON-RPC method is tried with: host 2's service and instance, and host 1's own. */
function rpcParams(caller: Caller): unknown[] {
  return [
    { serviceId: s2, envTag: 'prod' },
    { serviceId: s1, envTag: 'prod', address: '10.1.1.1', port: 9000 },
    { runtimeInstanceId: ids.instance2, reason: 'sweep' },
    { subscriptionId: ids.instance2 },
    { jwt: caller.token },
  ];
}

async function sweepRpc(methods: readonly string[], who: readonly Caller[]) {
  const findings: Finding[] = [];
  for (const caller of who) {
    for (const method of methods) {
      for (const params of rpcParams(caller)) {
        const socket = await RpcClient.connect(controller1.wsUrl, { token: caller.token }).catch(() => undefined);
        if (socket === undefined) continue;
        RpcClientsOpened.push(socket);
        const answer: RpcResponse | undefined = await Promise.race([
          socket.call(method, params),
          socket.closed.then(() => undefined),
        ]);
        const request: SweepRequest = { method, url: '', body: params, headers: {} };
        const text = JSON.stringify(socket.received);
        const shown = leaked(markers, request, { status: 0, text });
        if (shown.length > 0)
          findings.push({ caller: caller.name, request: method, detail: `shows ${shown.join(', ')}` });
        if (answer?.error?.code === -32603)
          findings.push({ caller: caller.name, request: method, detail: 'internal error' });
        socket.socket.terminate();
      }
    }
  }
  return findings;
}

describe('isolation sweep (DESIGN 16)', () => {
  it('the fixtures exist and a global admin sees host 2 (so the absence below means something)', async () => {
    const seen = await Promise.all([
      send(api, { method: 'GET', url: `/tags/${ids.tag2}`, headers: {} }, admin),
      send(api, { method: 'GET', url: `/registry/instances?hostId=${h2}`, headers: {} }, admin),
      send(api, { method: 'GET', url: `/oauth2/clients/${ids.client2}`, headers: {} }, admin),
      send(
        api,
        { method: 'GET', url: `/config-server/admin/properties?host=${h2}&serviceId=${s2}&envTag=prod`, headers: {} },
        admin,
      ),
    ]);
    const text = seen.map((a) => a.text).join('\n');
    for (const marker of [ids.tag2, ids.instance2, ids.client2, secret2]) expect(text).toContain(marker);
    expect(api.routes.length).toBeGreaterThan(30);
  });

  it("a host-1 admin's registry stream carries no change of host 2", async () => {
    const admin1 = await token({ sub: 'sw-a1', scope: 'portal.admin', host: h1 });
    const open = async (bearer: string) => {
      const res = await api.app.inject({
        method: 'GET',
        url: '/registry/changes',
        headers: { authorization: `Bearer ${bearer}` },
        payloadAsStream: true,
      });
      const seen: string[] = [];
      const stream = res.stream();
      stream.on('data', (chunk: Buffer) => seen.push(chunk.toString('utf8')));
      await waitFor(() => seen.join('').includes('event: ready'), 'the ready event');
      return { seen, close: () => stream.destroy() };
    };
    const hostOne = await open(admin1);
    const everyone = await open(admin);
    // A change in host 2, then one in host 1: the streams deliver in commit order.
    for (const [controller, host, service] of [
      [controller2, h2, s2],
      [controller1, h1, s1],
    ] as const) {
      const jwt = await token({ sub: 'rt', host, sid: service });
      const socket = await RpcClient.connect(controller.wsUrl, { token: jwt });
      RpcClientsOpened.push(socket);
      await socket.call('service/register', { serviceId: service, address: '10.7.7.7', port: 7000 });
    }
    await waitFor(() => everyone.seen.join('').includes(h1) && everyone.seen.join('').includes(h2), 'both changes');
    await waitFor(() => hostOne.seen.join('').includes(h1), "host 1's change on its admin's stream");
    expect(hostOne.seen.join('')).not.toContain(h2);
    hostOne.close();
    everyone.close();
  });

  it('no host-1 caller sees or writes anything of host 2, on any route of either app or any JSON-RPC method', async () => {
    const who = await hostOneCallers(h1, s1, h2, CAPABILITIES);
    // Host 2's own controller would keep touching its rows (liveness, lease) while the sweep runs.
    await controller2.close();
    const before = await rowsMentioning(db, markers);
    expect(before.length).toBeGreaterThan(20);
    const apiSweep = await sweepHttp(api, api.routes, who);
    const controllerSweep = await sweepHttp(controller1, controller1.routes, who);
    const rpc = await sweepRpc(messageNames(controller1.gateway), who);
    await controller1.quiesce();
    const after = await rowsMentioning(db, markers);
    expect([...apiSweep.findings, ...controllerSweep.findings, ...rpc]).toEqual([]);
    expect(after).toEqual(before);
    // Every route was called by every caller with at least one request (a route cannot drop out unseen).
    expect(apiSweep.requests).toBeGreaterThan(api.routes.length * who.length);
    // Last, the same walk as a global admin (which may see and write host 2): no answer is a 5xx.
    const global = [{ name: 'global admin', token: admin }];
    const failures = [
      ...(await sweepHttp(api, api.routes, global)).findings,
      ...(await sweepRpc(messageNames(controller1.gateway), global)),
    ];
    expect(failures.filter((f) => !f.detail.startsWith('shows'))).toEqual([]);
  }, 600_000);
});
