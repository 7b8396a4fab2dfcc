import { createHash } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { CONFIG_CHANNEL, ConfigHistoryRepository, ConfigLayerRepository, UnitOfWork } from '#database';
import { importLayer, parseImportArgs, readImport } from '../../apps/api/config-server/config-import.js';
import { ConfigHistoryService } from '../../apps/api/config-server/config-history.service.js';
import { historyRepository, recordLayerChange } from '../../apps/api/config-server/layer-history.js';
import { call, sqlDuring, startApi, unique, type TestApi } from '../support/api.js';
import { token } from '../support/tokens.js';
import { testConfigKeys } from '../support/key-ring.js';
import { waitFor } from '../support/wait.js';

/** DESIGN 14: every layer change is a version; history, rollback, reasons, host isolation, feed and NOTIFY. */
let api: TestApi;
let db: DataSource;
let alice: string;
let listener: pg.Client;
const notifications: string[] = [];

beforeAll(async () => {
  api = await startApi();
  db = api.app.get(DataSource);
  alice = await token({ sub: 'alice', scope: 'portal.admin' });
  // LISTEN needs a session of its own: behind a transaction pooler that is DATABASE_SESSION_URL (DESIGN 15).
  listener = new pg.Client({ connectionString: process.env.DATABASE_SESSION_URL || process.env.DATABASE_URL });
  await listener.connect();
  listener.on('notification', (n) => {
    if (n.channel === CONFIG_CHANNEL) notifications.push(n.payload ?? '');
  });
  await listener.query(`listen ${CONFIG_CHANNEL}`);
});
afterAll(async () => {
  await listener.end();
  await api.close();
});

const b64 = (text: string): string => Buffer.from(text).toString('base64');
const sha = (text: string): string => createHash('sha256').update(text).digest('hex');

interface Version {
  version: number;
  at: string;
  actor: string | null;
  reason: string | null;
  change: { added: string[]; changed: string[]; removed: string[]; sha256: Record<string, string> };
}

function write(method: 'PUT' | 'DELETE', path: string, query: string, body?: unknown, headers = {}, as = alice) {
  return call(api, method, `/config-server/admin/${path}?${query}`, { token: as, body, headers });
}

async function history(query: string, as = alice): Promise<{ total: number; versions: Version[] }> {
  const res = await call(api, 'GET', `/config-server/admin/history?${query}&limit=100`, { token: as });
  expect(res.statusCode).toBe(200);
  return res.json();
}

/** Every notification on CONFIG_CHANNEL committed so far: a marker sent last arrives after all of them. */
async function notified(): Promise<{ host: string; serviceId: string | null; version: number }[]> {
  const marker = unique('marker');
  await db.query(`select pg_notify($1, $2)`, [CONFIG_CHANNEL, marker]);
  await waitFor(() => notifications.includes(marker), 'the marker notification');
  const seen = notifications.splice(0, notifications.length).filter((n) => n !== marker && !n.startsWith('marker-'));
  return seen.map((n) => JSON.parse(n) as { host: string; serviceId: string | null; version: number });
}

async function configEvents(host: string, as: string): Promise<{ actor: string; data: Record<string, unknown> }[]> {
  type Page = { events: { type: string; actor: string; data: Record<string, unknown> }[]; next: number };
  const events: Page['events'] = [];
  // The whole feed, page by page: the suite's other files share this database and may have written 1,000 first.
  for (let after: number | undefined; ;) {
    const res = await call(api, 'GET', `/events?limit=1000${after === undefined ? '' : `&after=${after}`}`, {
      token: as,
    });
    expect(res.statusCode).toBe(200);
    const page = res.json<Page>();
    events.push(...page.events);
    if (page.next === after || (after === undefined && page.events.length === 0 && page.next === 0)) break;
    after = page.next;
  }
  return events.filter((e) => e.type === 'config.changed' && e.data.host === host);
}

describe('versions', () => {
  it('every kind of write appends one, in order, with the actor, the reason and the names that changed', async () => {
    const host = unique('hv');
    const q = `host=${host}&serviceId=svc&envTag=prod`;
    await notified();
    const put = await write(
      'PUT',
      'properties',
      q,
      { properties: { 'db.url': 'SECRET-A', 'db.pool': 5 } },
      { 'x-change-reason': 'initial setup' },
    );
    expect(put.statusCode).toBe(200);
    expect(put.headers.etag).toBe('W/"1"');
    expect(
      (await write('PUT', 'properties', q, { properties: { 'db.url': 'SECRET-B', 'db.user': 'u' } })).statusCode,
    ).toBe(200);
    expect((await write('PUT', 'files', `${q}&kind=cert`, { files: { 'ca.pem': b64('CERT-ONE') } })).statusCode).toBe(
      200,
    );
    expect((await write('PUT', 'files', `${q}&kind=file`, { files: { 'app.xml': b64('FILE-ONE') } })).statusCode).toBe(
      200,
    );
    expect((await write('PUT', 'files', `${q}&kind=cert`, { files: { 'ca.pem': b64('CERT-TWO') } })).statusCode).toBe(
      200,
    );
    expect(
      (await write('DELETE', 'files', `${q}&kind=file`, undefined, { 'x-change-reason': 'drop xml' })).statusCode,
    ).toBe(204);
    expect((await write('DELETE', 'properties', q)).statusCode).toBe(204);
    // The import command, with its own actor and reason.
    const dir = await mkdtemp(join(tmpdir(), 'bindery-history-'));
    await writeFile(join(dir, 'values.yml'), 'db.url: SECRET-C\n');
    const plan = await parseImportArgs([
      '--host',
      host,
      '--serviceId',
      'svc',
      '--envTag',
      'prod',
      join(dir, 'values.yml'),
      '--reason',
      'from git',
    ]);
    await importLayer(db, plan, await readImport(plan), testConfigKeys(), 1000);

    const { total, versions } = await history(q);
    expect(total).toBe(8);
    expect(versions.map((v) => [v.version, v.actor, v.reason])).toEqual([
      [8, 'config-import', 'from git'],
      [7, 'alice', null],
      [6, 'alice', 'drop xml'],
      [5, 'alice', null],
      [4, 'alice', null],
      [3, 'alice', null],
      [2, 'alice', null],
      [1, 'alice', 'initial setup'],
    ]);
    const changes = versions.map((v) => v.change).reverse();
    expect(changes).toEqual([
      { added: ['db.pool', 'db.url'], changed: [], removed: [], sha256: {} },
      { added: ['db.user'], changed: ['db.url'], removed: ['db.pool'], sha256: {} },
      { added: ['cert/ca.pem'], changed: [], removed: [], sha256: { 'cert/ca.pem': sha('CERT-ONE') } },
      { added: ['file/app.xml'], changed: [], removed: [], sha256: { 'file/app.xml': sha('FILE-ONE') } },
      { added: [], changed: ['cert/ca.pem'], removed: [], sha256: { 'cert/ca.pem': sha('CERT-TWO') } },
      { added: [], changed: [], removed: ['file/app.xml'], sha256: {} },
      { added: [], changed: [], removed: ['db.url', 'db.user'], sha256: {} },
      { added: ['db.url'], changed: [], removed: [], sha256: {} },
    ]);
    for (const v of versions) expect(Number.isNaN(Date.parse(v.at))).toBe(false);
    // Paged, newest first.
    const page = await call(api, 'GET', `/config-server/admin/history?${q}&offset=2&limit=2`, { token: alice });
    expect(page.json<{ total: number; versions: Version[] }>().versions.map((v) => v.version)).toEqual([6, 5]);
    // The page parameters are validated as on every list (the DTO is the address and PageQueryDto together).
    for (const [bad, field] of [
      ['offset=-1', 'offset'],
      ['limit=1001', 'limit'],
    ] as const) {
      const refused = await call(api, 'GET', `/config-server/admin/history?${q}&${bad}`, { token: alice });
      expect(refused.statusCode).toBe(400);
      expect(refused.json<{ errors: { field: string }[] }>().errors.map((e) => e.field)).toEqual([field]);
    }
    // The layer's ETag is its last version.
    const got = await call(api, 'GET', `/config-server/admin/properties?${q}`, { token: alice });
    expect(got.headers.etag).toBe('W/"8"');

    // One NOTIFY per committed change, naming the layer and its version only.
    const sent = (await notified()).filter((n) => n.host === host);
    expect(sent).toEqual(
      [1, 2, 3, 4, 5, 6, 7, 8].map((version) => ({
        host,
        serviceId: 'svc',
        productId: null,
        productVersion: null,
        envTag: 'prod',
        version,
      })),
    );

    // One config.changed per version, with the names that changed.
    const events = await configEvents(host, alice);
    expect(events.map((e) => [e.data.version, e.actor, e.data.keys])).toEqual([
      [1, 'alice', ['db.pool', 'db.url']],
      [2, 'alice', ['db.pool', 'db.url', 'db.user']],
      [3, 'alice', ['cert/ca.pem']],
      [4, 'alice', ['file/app.xml']],
      [5, 'alice', ['cert/ca.pem']],
      [6, 'alice', ['file/app.xml']],
      [7, 'alice', ['db.url', 'db.user']],
      [8, 'config-import', ['db.url']],
    ]);
    expect(events[0]?.data).toEqual({
      host,
      serviceId: 'svc',
      productId: null,
      productVersion: null,
      envTag: 'prod',
      version: 1,
      keys: ['db.pool', 'db.url'],
    });

    // Values never appear in history, events or their rows; contents of files neither.
    const secrets = ['SECRET-A', 'SECRET-B', 'SECRET-C', b64('CERT-ONE'), b64('CERT-TWO'), b64('FILE-ONE'), 'CERT-'];
    const history1 = (await call(api, 'GET', `/config-server/admin/history?${q}`, { token: alice })).body;
    const feed = (await call(api, 'GET', '/events?limit=1000', { token: alice })).body;
    const rows = await db.query<{ data: string }[]>(
      `select data::text as data from change_event where type = 'config.changed' and host_id = $1`,
      [host],
    );
    const changeRows = await db.query<{ change: string }[]>(
      `select v.change::text as change from config_layer_version v join config_layer l using (layer_id)
        where l.host = $1`,
      [host],
    );
    expect(rows).toHaveLength(8);
    for (const text of [history1, feed, ...rows.map((r) => r.data), ...changeRows.map((r) => r.change)]) {
      for (const secret of secrets) expect(text).not.toContain(secret);
      expect(text).not.toContain('"u"');
    }
  });

  it('history/{version} answers the whole content: properties, file hashes, contents only with include=files', async () => {
    const host = unique('hc');
    const q = `host=${host}&productId=p&productVersion=1.0`;
    await write('PUT', 'properties', q, { properties: { 'a.b': { deep: [1, 2] }, 'a.a': true } });
    await write('PUT', 'files', `${q}&kind=cert`, { files: { 'k.pem': b64('KEY') } });
    const res = await call(api, 'GET', `/config-server/admin/history/2?${q}`, { token: alice });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      version: 2,
      at: expect.any(String),
      actor: 'alice',
      reason: null,
      change: { added: ['cert/k.pem'], changed: [], removed: [], sha256: { 'cert/k.pem': sha('KEY') } },
      properties: { 'a.a': true, 'a.b': { deep: [1, 2] } },
      files: { cert: { 'k.pem': sha('KEY') }, file: {} },
    });
    expect(res.body).not.toContain(b64('KEY'));
    const withFiles = await call(api, 'GET', `/config-server/admin/history/2?${q}&include=files`, { token: alice });
    expect(withFiles.json<{ fileContents: unknown }>().fileContents).toEqual({
      cert: { 'k.pem': b64('KEY') },
      file: {},
    });
    expect((await call(api, 'GET', `/config-server/admin/history/3?${q}`, { token: alice })).statusCode).toBe(404);
    expect((await call(api, 'GET', `/config-server/admin/history/0?${q}`, { token: alice })).statusCode).toBe(400);
    expect((await call(api, 'GET', `/config-server/admin/history/x?${q}`, { token: alice })).statusCode).toBe(400);
    const other = `host=${host}&serviceId=never`;
    expect((await call(api, 'GET', `/config-server/admin/history/1?${other}`, { token: alice })).statusCode).toBe(404);
    expect(await history(other)).toEqual({ total: 0, versions: [] });
  });
});

describe('a write that changes nothing (DESIGN 14)', () => {
  it('appends no version, sends nothing and answers 200 with the unchanged ETag, for every kind of write', async () => {
    const host = unique('nc');
    const q = `host=${host}&serviceId=svc`;
    const put = (path: string, body: unknown) => write('PUT', path, path === 'files' ? `${q}&kind=file` : q, body);
    expect((await put('properties', { properties: { 'a.b': 1, 'c.d': [1, { e: 2 }] } })).headers.etag).toBe('W/"1"');
    expect((await put('files', { files: { 'x.txt': b64('X') } })).headers.etag).toBe('W/"2"');
    await notified();
    // The same properties (other key order), the same files: no version, nothing notified, no event.
    const again = await put('properties', { properties: { 'c.d': [1, { e: 2 }], 'a.b': 1 } });
    expect([again.statusCode, again.headers.etag]).toEqual([200, 'W/"2"']);
    expect(again.json()).toMatchObject({ properties: { 'a.b': 1, 'c.d': [1, { e: 2 }] } });
    const same = await put('files', { files: { 'x.txt': b64('X') } });
    expect([same.statusCode, same.headers.etag, same.json<{ files: unknown }>().files]).toEqual([
      200,
      'W/"2"',
      { 'x.txt': b64('X') },
    ]);
    expect((await write('DELETE', 'files', `${q}&kind=cert`)).statusCode).toBe(204);
    // Rolling back to the content already current adds nothing either.
    const rollback = await call(api, 'POST', `/config-server/admin/rollback?${q}&version=2`, {
      token: alice,
      headers: { 'if-match': 'W/"2"' },
    });
    expect([rollback.statusCode, rollback.headers.etag, rollback.json<{ version: number }>().version]).toEqual([
      200,
      'W/"2"',
      2,
    ]);
    expect((await history(q)).versions.map((v) => v.version)).toEqual([2, 1]);
    expect((await notified()).filter((n) => n.host === host)).toEqual([]);
    expect(await configEvents(host, alice)).toHaveLength(2);
    // A real change still counts.
    expect((await put('properties', { properties: { 'a.b': 2 } })).headers.etag).toBe('W/"3"');
  });

  it('an empty write to a layer that does not exist creates nothing: 200 with W/"0", no version, no layer', async () => {
    const host = unique('nc-new');
    const q = `host=${host}&serviceId=svc`;
    const props = await write('PUT', 'properties', q, { properties: {} });
    expect([props.statusCode, props.headers.etag, props.json<{ properties: unknown }>().properties]).toEqual([
      200,
      'W/"0"',
      {},
    ]);
    const files = await write('PUT', 'files', `${q}&kind=cert`, { files: {} });
    expect([files.statusCode, files.headers.etag]).toEqual([200, 'W/"0"']);
    expect((await history(q)).total).toBe(0);
    const listed = await call(api, 'GET', `/config-server/admin/layers?host=${host}`, { token: alice });
    expect(listed.json<{ layers: unknown[] }>().layers).toEqual([]);
    expect(await configEvents(host, alice)).toHaveLength(0);
  });
});

describe('rollback', () => {
  async function layer(q: string) {
    const props = await call(api, 'GET', `/config-server/admin/properties?${q}`, { token: alice });
    const certs = await call(api, 'GET', `/config-server/admin/files?${q}&kind=cert`, { token: alice });
    return {
      etag: props.headers.etag,
      properties: props.json<{ properties: unknown }>().properties,
      certs: certs.json<{ files: unknown }>().files,
    };
  }
  const rollback = (q: string, version: number, headers: Record<string, string>, as = alice) =>
    call(api, 'POST', `/config-server/admin/rollback?${q}&version=${version}`, { token: as, headers });

  it('makes an old version current as a new version, restoring properties and files', async () => {
    const host = unique('rb');
    const q = `host=${host}&serviceId=svc`;
    await write('PUT', 'properties', q, { properties: { 'x.a': 1, 'x.b': 'two' } });
    await write('PUT', 'files', `${q}&kind=cert`, { files: { 'c.pem': b64('OLD') } });
    const before = await layer(q);
    await write('PUT', 'properties', q, { properties: { 'x.c': 3 } });
    await write('PUT', 'files', `${q}&kind=cert`, { files: { 'd.pem': b64('NEW') } });
    await write('DELETE', 'properties', q);
    await notified();

    const res = await rollback(q, 2, { 'if-match': 'W/"5"', 'x-change-reason': 'undo the bad deploy' });
    expect(res.statusCode).toBe(200);
    expect(res.headers.etag).toBe('W/"6"');
    expect(res.json()).toEqual({
      host,
      serviceId: 'svc',
      productId: null,
      productVersion: null,
      envTag: null,
      version: 6,
      at: expect.any(String),
      actor: 'alice',
      reason: 'undo the bad deploy',
      change: {
        added: ['cert/c.pem', 'x.a', 'x.b'],
        changed: [],
        removed: ['cert/d.pem'],
        sha256: { 'cert/c.pem': sha('OLD') },
      },
      properties: { 'x.a': 1, 'x.b': 'two' },
      files: { cert: { 'c.pem': sha('OLD') }, file: {} },
    });
    expect(await layer(q)).toEqual({ ...before, etag: 'W/"6"' });
    const { total, versions } = await history(q);
    expect(total).toBe(6);
    expect(versions[0]).toMatchObject({ version: 6, actor: 'alice', reason: 'undo the bad deploy' });
    expect((await notified()).filter((n) => n.host === host).map((n) => n.version)).toEqual([6]);
    // A runtime reads the restored content.
    const runtime = await token({ sub: 'svc', scope: 'portal.r', host, sid: 'svc' });
    const configs = await call(api, 'GET', `/config-server/configs?${q}`, { token: runtime });
    expect(configs.json()).toEqual({ 'x.a': 1, 'x.b': 'two' });
  });

  it('a stale If-Match is 412 and changes nothing; no If-Match is 428; an unknown version 404', async () => {
    const host = unique('rbs');
    const q = `host=${host}&serviceId=svc`;
    await write('PUT', 'properties', q, { properties: { 'x.a': 1 } });
    await write('PUT', 'properties', q, { properties: { 'x.a': 2 } });
    const before = await layer(q);
    const rowsBefore = await db.query(
      `select count(*)::int as n from change_event where type = 'config.changed' and host_id = $1`,
      [host],
    );
    await notified();
    const stale = await rollback(q, 1, { 'if-match': 'W/"1"' });
    expect(stale.statusCode).toBe(412);
    expect(stale.json<{ detail: string }>().detail).toContain('version 2');
    const missing = await sqlDuring(() => rollback(q, 1, {}));
    expect(missing.result.statusCode).toBe(428);
    expect(missing.queries).toBe(0);
    expect((await rollback(q, 9, { 'if-match': 'W/"2"' })).statusCode).toBe(404);
    // DESIGN 3: 404 before 412, so an unknown version with a stale If-Match is 404 too.
    expect((await rollback(q, 9, { 'if-match': 'W/"1"' })).statusCode).toBe(404);
    expect((await rollback(`host=${host}&serviceId=none`, 1, { 'if-match': 'W/"0"' })).statusCode).toBe(404);
    expect((await rollback(q, 0, { 'if-match': 'W/"2"' })).statusCode).toBe(400);
    expect(await layer(q)).toEqual(before);
    expect((await history(q)).total).toBe(2);
    expect(
      await db.query(`select count(*)::int as n from change_event where type = 'config.changed' and host_id = $1`, [
        host,
      ]),
    ).toEqual(rowsBefore);
    expect((await notified()).filter((n) => n.host === host)).toEqual([]);
  });
});

describe('X-Change-Reason', () => {
  it.each([
    ['longer than 200 characters', 'r'.repeat(201)],
    ['with a control character', 'line\u0007bell'],
  ])('%s is 400 on every admin write, before any SQL', async (_name, reason) => {
    const q = `host=${unique('rs')}&serviceId=svc`;
    const writes = [
      () => write('PUT', 'properties', q, { properties: { 'a.b': 1 } }, { 'x-change-reason': reason }),
      () => write('PUT', 'files', `${q}&kind=file`, { files: {} }, { 'x-change-reason': reason }),
      () => write('DELETE', 'properties', q, undefined, { 'x-change-reason': reason }),
      () => write('DELETE', 'files', `${q}&kind=cert`, undefined, { 'x-change-reason': reason }),
      () =>
        call(api, 'POST', `/config-server/admin/rollback?${q}&version=1`, {
          token: alice,
          headers: { 'if-match': 'W/"1"', 'x-change-reason': reason },
        }),
    ];
    for (const send of writes) {
      const { result, queries } = await sqlDuring(send);
      expect(result.statusCode).toBe(400);
      expect(result.json<{ detail: string }>().detail).toContain('X-Change-Reason');
      expect(queries).toBe(0);
    }
  });

  it('200 characters are kept as they are', async () => {
    const q = `host=${unique('rs')}&serviceId=svc`;
    const reason = 'é'.repeat(0) + 'r'.repeat(200);
    expect(
      (await write('PUT', 'properties', q, { properties: { 'a.b': 1 } }, { 'x-change-reason': reason })).statusCode,
    ).toBe(200);
    expect((await history(q)).versions[0]?.reason).toBe(reason);
  });
});

describe('host isolation', () => {
  it("an admin bound to a host manages only that host's layers; it sees neither history nor events of another", async () => {
    const host = unique('iso');
    const q = `host=${host}&serviceId=svc`;
    await write('PUT', 'properties', q, { properties: { 'a.b': 'VALUE' } });
    const own = await token({ sub: 'own', scope: 'portal.admin', host });
    const other = await token({ sub: 'other', scope: 'portal.admin', host: unique('elsewhere') });
    const reader = await token({ sub: 'r', scope: 'portal.r portal.w', host });

    // Their own host: read, write, history, rollback.
    expect((await history(q, own)).total).toBe(1);
    expect((await write('PUT', 'properties', q, { properties: { 'a.b': 'V2' } }, {}, own)).statusCode).toBe(200);
    const back = await call(api, 'POST', `/config-server/admin/rollback?${q}&version=1`, {
      token: own,
      headers: { 'if-match': 'W/"2"' },
    });
    expect(back.statusCode).toBe(200);

    // Another host's admin: 403 before any SQL, for every route.
    const routes: [string, string, unknown?][] = [
      ['GET', `/config-server/admin/history?${q}`],
      ['GET', `/config-server/admin/history/1?${q}`],
      ['POST', `/config-server/admin/rollback?${q}&version=1`],
      ['GET', `/config-server/admin/properties?${q}`],
      ['PUT', `/config-server/admin/properties?${q}`, { properties: { 'a.b': 'X' } }],
      ['DELETE', `/config-server/admin/properties?${q}`],
      ['GET', `/config-server/admin/files?${q}&kind=cert`],
      ['PUT', `/config-server/admin/files?${q}&kind=cert`, { files: {} }],
      ['DELETE', `/config-server/admin/files?${q}&kind=cert`],
      ['GET', `/config-server/admin/layers?host=${host}`],
    ];
    for (const [method, url, body] of routes) {
      const { result, queries } = await sqlDuring(() =>
        call(api, method as 'GET', url, { token: other, body, headers: { 'if-match': 'W/"3"' } }),
      );
      expect([url, result.statusCode]).toEqual([url, 403]);
      expect(result.body).not.toContain('VALUE');
      expect(queries).toBe(0);
    }
    // Its layer list is its own host's only.
    const listed = await call(api, 'GET', '/config-server/admin/layers', { token: own });
    expect(listed.json<{ layers: { host: string }[] }>().layers.map((l) => l.host)).toEqual([host]);
    expect((await history(q)).total).toBe(3);

    // The feed: config.changed for that host's admins and global admins only.
    expect((await configEvents(host, own)).map((e) => e.data.version)).toEqual([1, 2, 3]);
    expect((await configEvents(host, alice)).map((e) => e.data.version)).toEqual([1, 2, 3]);
    expect(await configEvents(host, other)).toEqual([]);
    expect(await configEvents(host, reader)).toEqual([]);
  });
});

describe('NOTIFY', () => {
  it('is sent at commit only: a transaction that appended a version and then rolled back sends nothing', async () => {
    const host = unique('nt');
    const address = { host, serviceId: 'svc', productId: null, productVersion: null, envTag: null };
    await notified();
    const work = new UnitOfWork(db);
    const layers = new ConfigLayerRepository(db);
    await expect(
      work.run(async (tx) => {
        const layerId = await layers.in(tx).upsert(address, 'test');
        await layers.in(tx).writeProperties(layerId, { 'a.b': 1 }, 'replace');
        await recordLayerChange(historyRepository(db), tx, layerId, { actor: 'test', reason: null });
        throw new Error('changed my mind');
      }),
    ).rejects.toThrow('changed my mind');
    expect((await notified()).filter((n) => n.host === host)).toEqual([]);
    expect(await history(`host=${host}&serviceId=svc`)).toEqual({ total: 0, versions: [] });
    // A stale If-Match PUT neither.
    await write('PUT', 'properties', `host=${host}&serviceId=svc`, { properties: { 'a.b': 1 } });
    const stale = await write(
      'PUT',
      'properties',
      `host=${host}&serviceId=svc`,
      { properties: { 'a.b': 2 } },
      {
        'if-match': 'W/"0"',
      },
    );
    expect(stale.statusCode).toBe(412);
    expect((await notified()).filter((n) => n.host === host).map((n) => n.version)).toEqual([1]);
  });
});

describe('pruning', () => {
  it('the total is the counter the triggers keep: equal to the counted versions through appends, pruning and deletion', async () => {
    const host = unique('hc');
    const q = `host=${host}&serviceId=svc`;
    for (let i = 1; i <= 24; i++) await write('PUT', 'properties', q, { properties: { 'n.i': i } });
    const counted = () =>
      db.query<{ n: number; counter: number | null }[]>(
        `select count(v.version)::int as n, (select versions from config_history_count c where c.layer_id = l.layer_id)::int as counter
           from config_layer l left join config_layer_version v on v.layer_id = l.layer_id
          where l.host = $1 group by l.layer_id`,
        [host],
      );
    expect(await counted()).toEqual([{ n: 24, counter: 24 }]);
    await api.app.get(ConfigHistoryRepository).prune(365, 20, 21);
    expect(await counted()).toEqual([{ n: 21, counter: 21 }]);
    expect((await history(q)).total).toBe(21);
    // A layer deleted by hand takes its versions (foreign key cascade) and its counter with it.
    await db.query(`delete from config_layer where host = $1`, [host]);
    const left = await db.query<{ n: number }[]>(
      `select count(*)::int as n from config_history_count c
        where not exists (select 1 from config_layer l where l.layer_id = c.layer_id)`,
    );
    expect(left).toEqual([{ n: 0 }]);
  });

  it('keeps at most CONFIG_HISTORY_MAX_VERSIONS per layer, however recent the rest', async () => {
    const q = `host=${unique('mx')}&serviceId=svc`;
    for (let i = 1; i <= 25; i++) await write('PUT', 'properties', q, { properties: { 'n.i': i } });
    // The api's own prune with a maximum of 22 (the setting's floor is 20): days as configured (365).
    expect(await api.app.get(ConfigHistoryRepository).prune(365, 20, 22)).toBeGreaterThanOrEqual(3);
    const kept = await history(q);
    expect(kept.total).toBe(22);
    expect(kept.versions.map((v) => v.version)).toEqual(Array.from({ length: 22 }, (_, i) => 25 - i));
  });

  it('deletes versions older than CONFIG_HISTORY_DAYS but keeps the last 20 of each layer', async () => {
    const host = unique('pr');
    const q = `host=${host}&serviceId=svc`;
    const recent = `host=${host}&serviceId=recent`;
    for (let i = 1; i <= 25; i++) {
      await write('PUT', 'properties', q, { properties: { 'n.i': i } });
      await write('PUT', 'properties', recent, { properties: { 'n.i': i } });
    }
    // Every version of the first layer is two years old; the second layer's are new.
    await db.query(
      `update config_layer_version v set at = now() - interval '730 days' from config_layer l
        where l.layer_id = v.layer_id and l.host = $1 and l.service_id = 'svc'`,
      [host],
    );
    const pruned = await api.app.get(ConfigHistoryService).prune();
    expect(pruned).toBeGreaterThanOrEqual(5);
    const kept = await history(q);
    expect(kept.total).toBe(20);
    expect(kept.versions.map((v) => v.version)).toEqual(Array.from({ length: 20 }, (_, i) => 25 - i));
    expect((await history(recent)).total).toBe(25);
    expect((await call(api, 'GET', `/config-server/admin/history/5?${q}`, { token: alice })).statusCode).toBe(404);
    const gone = await call(api, 'POST', `/config-server/admin/rollback?${q}&version=5`, {
      token: alice,
      headers: { 'if-match': 'W/"25"' },
    });
    expect(gone.statusCode).toBe(404);
    expect(gone.json<{ detail: string }>().detail).toContain('pruned');
    // The oldest kept version still rolls back.
    const ok = await call(api, 'POST', `/config-server/admin/rollback?${q}&version=6`, {
      token: alice,
      headers: { 'if-match': 'W/"25"' },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json<{ properties: unknown }>().properties).toEqual({ 'n.i': 6 });
  });
});
