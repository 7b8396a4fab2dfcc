import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { unique } from '../support/api.js';
import { RpcClient, WS_PATH } from '../support/controller.js';
import { freePort, startBuilt, type Spawned } from '../support/processes.js';
import { addProbeColumn, dropProbeColumn, scratchDatabase, type ScratchDatabase } from '../support/schema-change.js';
import { callers, token } from '../support/tokens.js';
import { Traffic, type Probe } from '../support/traffic.js';

/** Steps each loop finishes first, so its statements are prepared on every pooled connection. */
const WARM_UP = 12;
/** Steps each loop finishes after each schema change, on the connections that prepared them before it. */
const AFTER = 12;
/** Longest wait for a phase's steps; a loop short of them fails the verdict rather than the wait. */
const PHASE_MS = 60_000;
const hostId = unique('live');
const service = unique('live-svc');
const env = 'prod';
const layer = `host=${hostId}&serviceId=${service}&envTag=${env}`;

let scratch: ScratchDatabase;
let api: Spawned | undefined;
let controller: Spawned | undefined;
let apiUrl: string;
let controllerUrl: string;

beforeAll(async () => {
  scratch = await scratchDatabase('live_migration');
  const [apiPort, controllerPort] = [await freePort(), await freePort()];
  const shared = {
    DATABASE_URL: scratch.url,
    DATABASE_SESSION_URL: scratch.sessionUrl,
    DATABASE_POOL_MODE: process.env.DATABASE_POOL_MODE ?? '',
    // Few connections, so each is reused and its named statements are hot when the schema changes.
    DB_POOL_SIZE: '4',
    CONTROLLER_HOST_ID: hostId,
  };
  // The api migrates the scratch database; the controller never does, so it starts second.
  api = await startBuilt('apps/api/main.js', apiPort, { ...shared, API_PORT: String(apiPort) });
  controller = await startBuilt('apps/controller/main.js', controllerPort, {
    ...shared,
    CONTROLLER_PORT: String(controllerPort),
  });
  apiUrl = `http://127.0.0.1:${apiPort}`;
  controllerUrl = `http://127.0.0.1:${controllerPort}`;
}, 90_000);

afterAll(async () => {
  for (const spawned of [api, controller]) spawned?.child.kill('SIGTERM');
  await Promise.all([api?.exit(), controller?.exit()]);
  await scratch?.drop();
});

/** A request with a bearer token and, when given, a JSON body. */
function send(bearer: string, method: string, body?: unknown): RequestInit {
  const json: Record<string, string> = body === undefined ? {} : { 'content-type': 'application/json' };
  return {
    method,
    headers: { authorization: `Bearer ${bearer}`, ...json },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  };
}

/** A string field of an answer's body, if it has one. */
const field = (body: unknown, name: string): string | undefined => {
  const value = (body as Record<string, unknown> | null | undefined)?.[name];
  return typeof value === 'string' ? value : undefined;
};

const ENTITY_TYPES = [
  { path: 'schemas', idField: 'schemaId', fields: (name: string) => ({ schemaName: name, schemaVersion: '1' }) },
  { path: 'products', idField: 'productId', fields: (name: string) => ({ productName: name, productVersion: '1' }) },
  { path: 'documents', idField: 'documentId', fields: (name: string) => ({ title: name, contentType: 'text/plain' }) },
] as const;

/** Tag writes and reads: create, list with usage, read, replace, reverse lookup, delete. */
async function tagStep(probe: Probe, admin: string, iteration: number): Promise<void> {
  const tagName = unique('live-tag');
  const created = await probe.http('POST /tags', 201, `${apiUrl}/tags`, send(admin, 'POST', { tagName }));
  await probe.http('GET /tags', 200, `${apiUrl}/tags?q=live-tag&limit=5&include=usage`, send(admin, 'GET'));
  const tagId = field(created, 'tagId');
  if (tagId === undefined) return;
  await probe.http('GET /tags/:id', 200, `${apiUrl}/tags/${tagId}?include=usage`, send(admin, 'GET'));
  const body = { tagName, tagDesc: `step ${iteration}` };
  await probe.http('PUT /tags/:id', 200, `${apiUrl}/tags/${tagId}`, send(admin, 'PUT', body));
  await probe.http('GET /tags/:id/entities', 200, `${apiUrl}/tags/${tagId}/entities`, send(admin, 'GET'));
  await probe.http('DELETE /tags/:id', 204, `${apiUrl}/tags/${tagId}`, send(admin, 'DELETE'));
}

/** One entity type's round: create tagged, filter by tag, read, replace, retag, its tags, delete. */
async function entityStep(
  probe: Probe,
  admin: string,
  type: (typeof ENTITY_TYPES)[number],
  seed: { tagId: string; tagName: string },
): Promise<void> {
  const at = `${apiUrl}/${type.path}`;
  const fields = type.fields(unique('live-entity'));
  const created = await probe.http(
    `POST /${type.path}`,
    201,
    at,
    send(admin, 'POST', { ...fields, tagIds: [seed.tagId] }),
  );
  await probe.http(`GET /${type.path}?tagNames`, 200, `${at}?tagNames=${seed.tagName}&limit=5`, send(admin, 'GET'));
  const id = field(created, type.idField);
  if (id === undefined) return;
  await probe.http(`GET /${type.path}/:id`, 200, `${at}/${id}`, send(admin, 'GET'));
  await probe.http(`PUT /${type.path}/:id`, 200, `${at}/${id}`, send(admin, 'PUT', fields));
  const tags = { tagIds: [seed.tagId] };
  await probe.http(`PUT /${type.path}/:id/tags`, 200, `${at}/${id}/tags`, send(admin, 'PUT', tags));
  await probe.http(`GET /${type.path}/:id/tags`, 200, `${at}/${id}/tags`, send(admin, 'GET'));
  await probe.http(`DELETE /${type.path}/:id`, 204, `${at}/${id}`, send(admin, 'DELETE'));
}

/** The runtime's reads of its merged config, files and certs, under the binding rule. */
async function configReadStep(probe: Probe, runtime: string): Promise<void> {
  for (const kind of ['configs', 'certs', 'files']) {
    const url = `${apiUrl}/config-server/${kind}?${layer}`;
    await probe.http(`GET /config-server/${kind}`, 200, url, send(runtime, 'GET'));
  }
}

/** An operator's layer writes (properties and a cert) and reads of the layer, its history and the layer list. */
async function configAdminStep(probe: Probe, admin: string, iteration: number): Promise<void> {
  const base = `${apiUrl}/config-server/admin`;
  const properties = { 'server.httpPort': 8000 + (iteration % 1000), 'live.step': `step-${iteration}` };
  await probe.http('PUT admin/properties', 200, `${base}/properties?${layer}`, send(admin, 'PUT', { properties }));
  const files = { 'server.pem': Buffer.from(`cert ${iteration}`).toString('base64') };
  await probe.http('PUT admin/files', 200, `${base}/files?${layer}&kind=cert`, send(admin, 'PUT', { files }));
  await probe.http('GET admin/properties', 200, `${base}/properties?${layer}`, send(admin, 'GET'));
  const history = await probe.http('GET admin/history', 200, `${base}/history?${layer}&limit=5`, send(admin, 'GET'));
  const latest = (history as { versions?: { version?: number }[] } | undefined)?.versions?.[0]?.version;
  if (latest !== undefined) {
    await probe.http('GET admin/history/:v', 200, `${base}/history/${latest}?${layer}`, send(admin, 'GET'));
  }
  await probe.http('GET admin/layers', 200, `${base}/layers?host=${hostId}`, send(admin, 'GET'));
}

/** A registration's life on one socket, then the registry as the api and the controller list it. */
async function registryStep(probe: Probe, admin: string, socket: RpcClient, iteration: number): Promise<void> {
  const registration = { serviceId: service, envTag: env, address: '10.9.0.1', port: 1000 + (iteration % 20) };
  const registered = await probe.rpc(socket, 'service/register', { ...registration, version: `v${iteration}` });
  await probe.rpc(socket, 'discovery/lookup', { serviceId: service, envTag: env });
  const runtimeInstanceId = field(registered, 'runtimeInstanceId');
  if (runtimeInstanceId !== undefined) {
    await probe.rpc(socket, 'service/deregister', { runtimeInstanceId, reason: 'live-migration' });
  }
  await probe.http('GET /registry/instances', 200, `${apiUrl}/registry/instances?limit=5`, send(admin, 'GET'));
  await probe.http('GET controller /instances', 200, `${controllerUrl}/instances?limit=5`, send(admin, 'GET'));
}

/** The distinct database errors `spawned` logged (code, reason, statement), to name the culprit on failure. */
function databaseErrors(spawned: Spawned | undefined): string[] {
  const seen = new Set<string>();
  for (const line of spawned?.output().split('\n') ?? []) {
    if (!line.includes('"code"')) continue;
    try {
      const { code, reason, query } = JSON.parse(line) as Record<string, unknown>;
      if (typeof code === 'string') seen.add(`${code} ${String(reason)}: ${String(query)}`);
    } catch {
      // Not a log line of JSON.
    }
  }
  return [...seen];
}

// DESIGN 15: no statement of either running process may depend on a table's full column list.
describe('a column added to every table, then dropped, under live traffic on both processes', () => {
  it('answers no 5xx and no JSON-RPC server error before, during and after each change', async () => {
    const admin = await callers.admin();
    const runtimeClaims = { sub: 'rt-live', sid: service, host: hostId, env };
    const runtime = await token({ ...runtimeClaims, scope: 'portal.r' });
    const socket = await RpcClient.connect(`${controllerUrl.replace('http', 'ws')}${WS_PATH}`, {
      token: await token(runtimeClaims),
    });
    const seedName = unique('live-seed');
    const seed = await fetch(`${apiUrl}/tags`, send(admin, 'POST', { tagName: seedName }));
    expect(seed.status).toBe(201);
    const seedTag = { tagId: field(await seed.json(), 'tagId') ?? '', tagName: seedName };

    const traffic = new Traffic('warm-up');
    traffic.start('tags', (probe, i) => tagStep(probe, admin, i));
    for (const type of ENTITY_TYPES) traffic.start(type.path, (probe) => entityStep(probe, admin, type, seedTag));
    traffic.start('config reads', (probe) => configReadStep(probe, runtime));
    traffic.start('config admin', (probe, i) => configAdminStep(probe, admin, i));
    let after = 0;
    traffic.start('events', async (probe) => {
      const page = await probe.http('GET /events', 200, `${apiUrl}/events?after=${after}`, send(admin, 'GET'));
      const next = (page as { next?: unknown } | undefined)?.next;
      if (typeof next === 'number') after = next;
    });
    traffic.start('registry', (probe, i) => registryStep(probe, admin, socket, i));

    let altered: string[] = [];
    try {
      await traffic.until(WARM_UP, PHASE_MS);
      traffic.enter('adding');
      altered = await addProbeColumn(scratch.sessionUrl);
      traffic.enter('added');
      await traffic.until(AFTER, PHASE_MS);
      traffic.enter('dropping');
      await dropProbeColumn(scratch.sessionUrl);
      traffic.enter('dropped');
      await traffic.until(AFTER, PHASE_MS);
    } finally {
      await traffic.stop();
      await socket.close();
    }

    // The change reached the tables behind every loop, not just some of them.
    const touched = ['tag', 'entity_tag', 'schema', 'product', 'document', 'change_event', 'runtime_instance'];
    expect(altered).toEqual(
      expect.arrayContaining([...touched, 'config_layer', 'config_layer_version', 'config_file']),
    );
    const { failures, summary } = traffic.verdict({ 'warm-up': WARM_UP, added: AFTER, dropped: AFTER });
    const logged = [...databaseErrors(api), ...databaseErrors(controller)];
    const report = [...failures, '', 'all answers:', summary, '', 'database errors logged:', ...logged].join('\n');
    expect(failures.length === 0 ? 'no failures' : report).toBe('no failures');
  }, 240_000);
});
