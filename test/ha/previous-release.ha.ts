import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort, run, startBuilt, type Spawned } from '../support/processes.js';
import {
  mappedRoutes,
  previousRelease,
  PREVIOUS_RELEASE_BUILD_MS,
  releaseSurface,
  startRelease,
  type PreviousRelease,
  type ReleaseSurface,
  type Route,
} from '../support/previous-release.js';
import { addProbeColumn, PROBE_COLUMN } from '../support/schema-change.js';
import { token, writeIssuerKeyFile } from '../support/tokens.js';
import { Cluster, until } from './cluster.js';
import { Rpc, rpcFailed, send, type Answer } from './upgrade-support.js';

/**
 * DESIGN 15: the previous release's processes keep working against the schema the current release migrated
 * and a later expand step widened (a column on every table). Every route of its api and controller, read
 * from its own route table, and every JSON-RPC method it declares answer without a server error; writes
 * made through it read back.
 */
const tag = `${process.pid}-${Date.now().toString(36)}`;
const HOST = `h-prev-${tag}`;
const SERVICE = `svc-prev-${tag}`;
const ENV = 'prod';

let cluster: Cluster;
let release: PreviousRelease;
let surface: ReleaseSurface;
let api: { spawned: Spawned; url: string; ws: string };
let controller: typeof api;
let admin: string;
let runtime: string;
const ids: Record<string, string> = {};
const sockets: Rpc[] = [];

beforeAll(async () => {
  [release, cluster] = await Promise.all([previousRelease(), Cluster.start()]);
  surface = await releaseSurface(release);
  // The current release's migration command, as an operator runs it before the rollout.
  const migration = run('scripts/migrate.js', [], { DATABASE_URL: cluster.url(), LOG_LEVEL: 'warn' });
  if ((await migration.exit(60_000)) !== 0) throw new Error(`current migration failed:\n${migration.output()}`);
  await addProbeColumn(cluster.url());
  const start = async (main: string, portSetting: string, extra: Record<string, string> = {}) => {
    const port = await freePort();
    const env = { DATABASE_URL: cluster.url(), CONTROLLER_HOST_ID: HOST, [portSetting]: String(port), ...extra };
    const spawned = await startRelease(main, port, env);
    return { spawned, url: `http://127.0.0.1:${port}`, ws: `ws://127.0.0.1:${port}/ws/microservice` };
  };
  // The issuer's key turns its routes on: they are routes of the old release too.
  api = await start(release.apiMain, 'API_PORT', { TOKEN_ISSUER_KEY_FILE: writeIssuerKeyFile().file });
  controller = await start(release.controllerMain, 'CONTROLLER_PORT');
  // Every capability the old release knows, besides the broad admin scope: nothing is refused for scope.
  admin = await token({ sub: 'prev-admin', scope: ['portal.admin', ...surface.capabilities].join(' ') });
  runtime = await token({ sub: 'prev-rt', scope: 'portal.r', host: HOST, sid: SERVICE, env: ENV });
}, PREVIOUS_RELEASE_BUILD_MS + 240_000);

afterAll(async () => {
  for (const s of sockets) s.close();
  for (const p of [api?.spawned, controller?.spawned]) p?.child.kill('SIGTERM');
  await Promise.all([api?.spawned.exit(15_000), controller?.spawned.exit(15_000)]);
  await cluster?.stop();
}, 60_000);

/** A JSON request as the admin (or `bearer`); the answer's body parsed when it is JSON. */
async function json(base: string, method: string, path: string, body?: unknown, bearer = admin, ifMatch = '*') {
  const answer = await send(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${bearer}`,
      // Unconditional writes: the sweep judges the answer, not the precondition.
      ...(method === 'GET' ? {} : { 'if-match': ifMatch }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(answer.text) as Record<string, unknown>;
  } catch {
    // Not JSON (an empty 204, YAML): the status says enough.
  }
  return { ...answer, json: parsed };
}

const ENTITIES = [
  { path: 'schemas', idField: 'schemaId', name: (n: string) => ({ schemaName: n }) },
  { path: 'products', idField: 'productId', name: (n: string) => ({ productName: n }) },
  { path: 'documents', idField: 'documentId', name: (n: string) => ({ title: n }) },
] as const;
const LAYER = `host=${HOST}&serviceId=${SERVICE}&envTag=${ENV}`;
let fresh = 0;
const name = (prefix: string): string => `${prefix}-${tag}-${fresh++}`;

describe(`the previous release (deploy/previous-release.json) on the current, expanded schema (DESIGN 15)`, () => {
  it('starts on it: the expand step touched every table, and the old route table is read from the old processes', async () => {
    const probes = await cluster.query<{ n: number }>(
      cluster.url(),
      `select count(*)::int as n from information_schema.columns where table_schema = 'public' and column_name = $1`,
      [PROBE_COLUMN],
    );
    expect(probes[0]?.n).toBeGreaterThan(10);
    await until(
      () => mappedRoutes(api.spawned.output()).some((r) => r.url === '/oauth2/clients'),
      "the old api's route table in its output",
      10_000,
    );
    const routes = mappedRoutes(api.spawned.output());
    const doc = (await json(api.url, 'GET', '/docs/openapi.json')).json as { paths: Record<string, object> };
    // Nest's route lines cover at least what the old release documents (so parsing them lost nothing).
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`),
    );
    expect(routes.map((r) => `${r.method} ${r.url}`)).toEqual(expect.arrayContaining(documented));
    expect(routes.some((r) => r.url === '/oauth2/clients')).toBe(true);
    // Its log lines may reach our pipe after it answered ready: wait for them, not for a time.
    await until(
      () => mappedRoutes(controller.spawned.output()).some((r) => r.url === '/instances'),
      "the old controller's route table in its output",
      10_000,
    );
    expect(surface.methods).toEqual(expect.arrayContaining(['service/register', 'discovery/subscribe']));
  });

  it('writes through the old api read back: tags, entities, config layers, issuer clients and tokens', async () => {
    const created = await json(api.url, 'POST', '/tags', { tagName: name('tag'), hostId: HOST });
    expect(created.status).toBe(201);
    ids.tagId = String(created.json.tagId);
    const read = await json(api.url, 'GET', `/tags/${ids.tagId}`);
    expect({ status: read.status, name: read.json.tagName }).toEqual({ status: 200, name: created.json.tagName });
    const renamed = await json(api.url, 'PUT', `/tags/${ids.tagId}`, { tagName: name('renamed'), hostId: HOST });
    expect(renamed.status).toBe(200);
    for (const entity of ENTITIES) {
      const body = { ...entity.name(name(entity.path)), hostId: HOST, tagIds: [ids.tagId] };
      const made = await json(api.url, 'POST', `/${entity.path}`, body);
      expect(made.status).toBe(201);
      ids[entity.path] = String(made.json[entity.idField]);
      const back = await json(api.url, 'GET', `/${entity.path}/${ids[entity.path]}`);
      expect({ status: back.status, tagIds: back.json.tagIds }).toEqual({ status: 200, tagIds: [ids.tagId] });
    }
    expect((await json(api.url, 'GET', `/tags/${ids.tagId}/entities`)).status).toBe(200);
    const value = name('value');
    const layer = `/config-server/admin/properties?${LAYER}`;
    expect((await json(api.url, 'PUT', layer, { properties: { 'app.value': value } })).status).toBe(200);
    const second = await json(api.url, 'PUT', layer, { properties: { 'app.value': name('later') } });
    const etag = String(second.headers.etag);
    const rollback = `/config-server/admin/rollback?${LAYER}&version=1`;
    expect((await json(api.url, 'POST', rollback, undefined, admin, etag)).status).toBe(200);
    const files = `/config-server/admin/files?host=${HOST}&serviceId=${SERVICE}&kind=file`;
    expect((await json(api.url, 'PUT', files, { files: { 'a.txt': 'YQ==' } })).status).toBe(200);
    // The rollback made version 1's value current again.
    const configs = await json(api.url, 'GET', `/config-server/configs?${LAYER}`, undefined, runtime);
    expect({ status: configs.status, value: configs.json['app.value'] }).toEqual({ status: 200, value });
    const history = await json(api.url, 'GET', `/config-server/admin/history?${LAYER}`);
    expect(history.status).toBe(200);
    const client = await json(api.url, 'POST', '/oauth2/clients', {
      host: HOST,
      sid: SERVICE,
      envs: [ENV],
      scopes: ['portal.r'],
    });
    expect(client.status).toBe(201);
    ids.clientId = String(client.json.clientId);
    expect((await json(api.url, 'GET', `/oauth2/clients/${ids.clientId}`)).status).toBe(200);
    const basic = Buffer.from(`${ids.clientId}:${String(client.json.clientSecret)}`).toString('base64');
    const issued = await send(`${api.url}/oauth2/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=client_credentials',
    });
    expect(issued.status).toBe(200);
    const events = await json(api.url, 'GET', '/events?after=0&limit=1000');
    expect(events.status).toBe(200);
    expect(events.text).toContain(ids.tagId);
  });

  it('reads what this release wrote before keys:encrypt-existing: no 5xx, no ciphertext (DESIGN 17)', async () => {
    // As in a deployment that held values when this release migrated it: encrypted writes wait for the command.
    await cluster.query(cluster.url(), 'update config_encryption set encrypted_writes = false');
    const port = await freePort();
    const current = await startBuilt('apps/api/main.js', port, {
      DATABASE_URL: cluster.url(),
      API_PORT: String(port),
      CONTROLLER_HOST_ID: HOST,
    });
    try {
      const here = `http://127.0.0.1:${port}`;
      const layer = `host=${HOST}&serviceId=${SERVICE}`;
      const value = name('current');
      const put = await json(here, 'PUT', `/config-server/admin/properties?${layer}`, {
        properties: { 'enc.v': value },
      });
      expect(put.status).toBe(200);
      const file = await json(here, 'PUT', `/config-server/admin/files?${layer}&kind=cert`, {
        files: { 'c.pem': Buffer.from(value).toString('base64') },
      });
      expect(file.status).toBe(200);
      const sealed = await cluster.query<{ n: number }>(
        cluster.url(),
        `select (select count(*) from config_property where sealed is not null)
              + (select count(*) from config_file where content_id is not null)
              + (select count(*) from config_layer_version where sealed_properties is not null) as n`,
      );
      expect(Number(sealed[0]?.n)).toBe(0);
      // The old release serves it: merged for the runtime, whole for the admin, in its history.
      const configs = await json(api.url, 'GET', `/config-server/configs?${LAYER}`, undefined, runtime);
      expect({ status: configs.status, value: configs.json['enc.v'] }).toEqual({ status: 200, value });
      const certs = await json(api.url, 'GET', `/config-server/certs?${LAYER}`, undefined, runtime);
      expect({ status: certs.status, pem: certs.json['c.pem'] }).toEqual({
        status: 200,
        pem: Buffer.from(value).toString('base64'),
      });
      const props = await json(api.url, 'GET', `/config-server/admin/properties?${layer}`);
      expect(props.json.properties).toEqual({ 'enc.v': value });
      const version = await json(api.url, 'GET', `/config-server/admin/history/2?${layer}&include=files`);
      expect([version.status, version.json.properties]).toEqual([200, { 'enc.v': value }]);
    } finally {
      current.child.kill('SIGTERM');
      await current.exit(15_000);
    }
  });

  it('registrations through the old controller: register, lookup, subscribe, update, refresh, deregister', async () => {
    const rt = await Rpc.open(controller.ws, runtime);
    const watcher = await Rpc.open(controller.ws, runtime);
    sockets.push(rt, watcher);
    const subscribed = await watcher.call('discovery/subscribe', { serviceId: SERVICE, envTag: ENV });
    const subscriptionId = String(subscribed.result?.subscriptionId);
    const registered = await rt.call('service/register', { serviceId: SERVICE, address: '10.8.0.1', port: 9001 });
    const instanceId = String(registered.result?.runtimeInstanceId);
    ids.instanceId = instanceId;
    await until(
      () => (watcher.lastNodes(subscriptionId) ?? []).some((n) => n.runtimeInstanceId === instanceId),
      'the subscriber to hear it',
      10_000,
    );
    const looked = await rt.call('discovery/lookup', { serviceId: SERVICE, envTag: ENV });
    expect(JSON.stringify(looked.result)).toContain(instanceId);
    const updated = await rt.call('service/update_metadata', { version: '2.0.0', tags: { zone: 'b' } });
    expect(updated.result?.status).toBe('updated');
    const listed = await json(api.url, 'GET', `/registry/instances?hostId=${HOST}`);
    expect(listed.status).toBe(200);
    expect(listed.text).toContain('2.0.0');
    expect((await json(controller.url, 'GET', `/instances?hostId=${HOST}`)).text).toContain(instanceId);
    const refreshed = await rt.call('session/refresh', {
      jwt: await token({ sub: 'prev-rt', scope: 'portal.r', host: HOST, sid: SERVICE, env: ENV }),
    });
    expect(refreshed.result?.status).toBe('refreshed');
    const gone = await rt.call('service/deregister', { runtimeInstanceId: instanceId, reason: 'smoke' });
    expect(gone.result?.status).toBe('deregistered');
    await until(
      () => !(watcher.lastNodes(subscriptionId) ?? []).some((n) => n.runtimeInstanceId === instanceId),
      'the subscriber to hear it left',
      10_000,
    );
  });

  it('every route of the old api and controller answers below 500 (reads, then writes, then deletes)', async () => {
    const failures: string[] = [];
    let requests = 0;
    for (const [base, routes] of [
      [api.url, mappedRoutes(api.spawned.output())],
      [controller.url, mappedRoutes(controller.spawned.output())],
    ] as const) {
      const order = ['GET', 'POST', 'PUT', 'DELETE'];
      for (const route of [...routes].sort((a, b) => order.indexOf(a.method) - order.indexOf(b.method))) {
        // The runtime reads of the config server are token-bound: a runtime's token, not an admin's.
        const bound = /^\/config-server\/(?!admin\/)/.test(route.url);
        for (const url of urlsOf(route)) {
          for (const body of route.method === 'GET' || route.method === 'DELETE' ? [undefined] : bodiesFor(route)) {
            const answer: Answer = await json(base, route.method, url, body, bound ? runtime : admin);
            requests++;
            if (answer.status >= 500)
              failures.push(
                `${answer.status} ${route.method} ${url} ${JSON.stringify(body)}: ${answer.text.slice(0, 300)}`,
              );
          }
        }
      }
    }
    process.stdout.write(`\nprevious release v${release.version}: ${requests} requests over its routes\n`);
    expect(failures).toEqual([]);
  }, 240_000);

  it('every JSON-RPC method of the old controller answers without a server error', async () => {
    const failures: string[] = [];
    const params = [
      { serviceId: SERVICE, envTag: ENV, address: '10.8.0.2', port: 9002, version: '1', tags: { zone: 'a' } },
      { serviceId: SERVICE, envTag: ENV, version: '3', port: 9003 },
      { runtimeInstanceId: ids.instanceId, reason: 'smoke' },
      { subscriptionId: 'unknown' },
      { jwt: runtime },
    ];
    for (const method of surface.methods) {
      for (const p of params) {
        const socket = await Rpc.open(controller.ws, runtime);
        sockets.push(socket);
        // A socket the call closes (a binding refusal) answers first; 1011 would be a server error.
        const answer = await socket
          .call(method, p)
          .catch((error: Error) => ({ error: { code: 0, message: error.message } }));
        if (rpcFailed(answer) || answer.error?.message.includes('1011'))
          failures.push(`${method} ${JSON.stringify(p)}: ${JSON.stringify(answer)}`);
        socket.close();
      }
    }
    expect(failures).toEqual([]);
    // Nothing the old processes logged at error level or above (a failure answered other than 5xx).
    const errors = `${api.spawned.output()}\n${controller.spawned.output()}`
      .split('\n')
      .filter((l) => /"level":(50|60)/.test(l));
    expect(errors).toEqual([]);
  }, 120_000);
});

/** A route's URLs: each path parameter from the fixtures, with each query the routes read. */
function urlsOf(route: Route): string[] {
  const kind = route.url.split('/')[1] ?? '';
  const fill = (param: string): string => {
    if (param === 'version') return '1';
    if (param === 'file') return 'index.html';
    if (param === 'id') return ids[kind] ?? 'missing';
    return ids[param] ?? 'missing';
  };
  const path = route.url.replace(/:(\w+)/g, (_, param: string) => encodeURIComponent(fill(param)));
  return [
    '',
    `?${LAYER}`,
    `?host=${HOST}&serviceId=${SERVICE}&kind=file`,
    `?hostId=${HOST}&include=usage`,
    `?${LAYER}&version=1`,
    '?after=0&limit=5&wait=1',
  ].map((query) => `${path}${query}`);
}

/** Valid bodies where the route's kind is known, and an empty one, which must be refused below 500 too. */
function bodiesFor(route: Route): unknown[] {
  const kind = route.url.split('/')[1] ?? '';
  const entity = ENTITIES.find((e) => e.path === kind);
  if (route.url === '/tags/batch') {
    const entityId = ids.schemas ?? '';
    return [{ operations: [{ op: 'add', entityType: 'schema', entityId, tagIds: [ids.tagId] }] }];
  }
  if (route.url.endsWith('/:id/tags')) return [{ tagIds: [ids.tagId] }, {}];
  if (kind === 'tags') return [{ tagName: name('sweep'), hostId: HOST }, {}];
  if (entity !== undefined) return [{ ...entity.name(name('sweep')), hostId: HOST, tagIds: [ids.tagId] }, {}];
  if (route.url.endsWith('/properties')) return [{ properties: { 'sweep.key': name('v') } }, {}];
  if (route.url.endsWith('/files')) return [{ files: { 'sweep.txt': 'c3dlZXA=' } }, {}];
  if (route.url === '/oauth2/clients') return [{ host: HOST, sid: SERVICE, envs: [ENV], scopes: ['portal.r'] }, {}];
  if (route.url.endsWith('/secret')) return [{ graceSec: 60 }];
  return [{}];
}
