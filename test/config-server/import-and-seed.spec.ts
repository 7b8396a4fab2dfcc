import { mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import {
  importLayer,
  ImportUsageError,
  parseImportArgs,
  readImport,
} from '../../apps/api/config-server/config-import.js';
import { seedDevConfig } from '../../apps/api/config-server/dev-seed.js';
import { startApi, unique, type TestApi } from '../support/api.js';
import { adminToken, bearer, send, signed, type Query } from './support.js';
import { testConfigKeys } from '../support/key-ring.js';

const keys = testConfigKeys();

describe('config:import', () => {
  let api: TestApi;
  let dir: string;

  beforeAll(async () => {
    api = await startApi();
    dir = await mkdtemp(join(tmpdir(), 'bindery-import-'));
  });
  afterAll(() => api.close());

  const read = async (endpoint: string, query: Query, claims: Record<string, unknown>): Promise<unknown> => {
    const { res } = await send(api, 'GET', `/config-server/${endpoint}`, {
      query,
      authorization: bearer(await signed({ scope: 'portal.r', ...claims })),
    });
    expect(res.statusCode).toBe(200);
    return res.json();
  };

  it('loads a values.yml and a folder of files into one layer, replacing what was there', async () => {
    const host = unique('im-host');
    const values = join(dir, `${host}-values.yml`);
    await writeFile(
      values,
      [
        'server.httpPort: 8443',
        'server.enableHttps: true',
        'server.serviceName: "8080"',
        'client.hosts:',
        '  - a.example',
        '  - b.example',
        'client.timeouts: { connect: 2, read: 5 }',
        'client.since: 2024-01-01',
        '',
      ].join('\n'),
    );
    const files = join(dir, `${host}-files`);
    await mkdir(files);
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => 255 - i));
    await writeFile(join(files, 'server.keystore'), bytes);
    await writeFile(join(files, 'ca.pem'), 'ca');
    await writeFile(join(files, '.hidden'), 'skipped');
    await mkdir(join(files, 'sub'));
    await writeFile(join(files, 'sub', 'nested.txt'), 'skipped');
    await symlink(join(files, 'ca.pem'), join(files, 'linked.pem'));

    const argv = ['--host', host, '--serviceId', 'petstore', '--envTag', 'prod', values, files, '--kind', 'cert'];
    const plan = await parseImportArgs(argv);
    expect(plan).toEqual({
      address: { host, serviceId: 'petstore', productId: null, productVersion: null, envTag: 'prod' },
      valuesFile: values,
      filesDir: files,
      kind: 'cert',
      reason: null,
    });
    const db = api.app.get(DataSource);
    // Something to replace.
    await importLayer(
      db,
      plan,
      { properties: { 'old.key': 1 }, files: new Map([['old.pem', Buffer.from('x')]]) },
      keys,
      1000,
    );
    const summary = await importLayer(db, plan, await readImport(plan), keys, 1000);
    expect(summary).toEqual({ unchanged: false, properties: 6, files: 3 });
    // The same import again changes nothing: no version (DESIGN 14).
    expect(await importLayer(db, plan, await readImport(plan), keys, 1000)).toEqual({
      unchanged: true,
      properties: 6,
      files: 3,
    });

    const query = { host, serviceId: 'petstore', envTag: 'prod' };
    const claims = { host, sid: 'petstore', env: 'prod' };
    expect(await read('configs', query, claims)).toEqual({
      'client.hosts': ['a.example', 'b.example'],
      'client.since': '2024-01-01',
      'client.timeouts': { connect: 2, read: 5 },
      'server.enableHttps': true,
      'server.httpPort': 8443,
      'server.serviceName': '8080',
    });
    const certs = (await read('certs', query, claims)) as Record<string, string>;
    expect(Object.keys(certs)).toEqual(['ca.pem', 'linked.pem', 'server.keystore']);
    expect(Buffer.from(certs['server.keystore'], 'base64').equals(bytes)).toBe(true);
    expect(await read('files', query, claims)).toEqual({});
  });

  it('a values file alone leaves the files alone, and a folder alone leaves the properties alone', async () => {
    const host = unique('im-parts');
    const db = api.app.get(DataSource);
    const base = ['--host', host, '--productId', 'prod', '--productVersion', '1.0'];
    const values = join(dir, `${host}.yml`);
    await writeFile(values, 'a.b: 1\n');
    const folder = join(dir, `${host}-dir`);
    await mkdir(folder);
    await writeFile(join(folder, 'f.txt'), 'f');
    const onlyFolder = await parseImportArgs([...base, folder]);
    await importLayer(db, onlyFolder, await readImport(onlyFolder), keys, 1000);
    const onlyValues = await parseImportArgs([...base, values]);
    expect(onlyValues.filesDir).toBeUndefined();
    await importLayer(db, onlyValues, await readImport(onlyValues), keys, 1000);
    const query = { host, productId: 'prod', productVersion: '1.0' };
    expect(await read('configs', query, { host })).toEqual({ 'a.b': 1 });
    expect(await read('files', query, { host })).toEqual({ 'f.txt': Buffer.from('f').toString('base64') });
  });

  it.each([
    ['no host', ['--serviceId', 's', 'x.yml']],
    ['no serviceId or product', ['--host', 'h', 'x.yml']],
    [
      'both serviceId and product',
      ['--host', 'h', '--serviceId', 's', '--productId', 'p', '--productVersion', '1', 'x.yml'],
    ],
    ['an unknown option', ['--host', 'h', '--serviceId', 's', '--nope', 'x.yml']],
    ['a bad kind', ['--host', 'h', '--serviceId', 's', '--kind', 'key', 'x.yml']],
    ['nothing to import', ['--host', 'h', '--serviceId', 's']],
    ['a missing file', ['--host', 'h', '--serviceId', 's', '/nonexistent/values.yml']],
  ])('refuses %s', async (_, argv) => {
    await expect(parseImportArgs(argv)).rejects.toBeInstanceOf(ImportUsageError);
  });

  it.each([
    ['a key that is not configName.propertyName', 'server: { httpPort: 1 }\n'],
    ['a null value', 'a.b: ~\n'],
    ['a list at the top', '- a.b\n'],
    ['invalid YAML', 'a.b: [\n'],
    ['a duplicate key', 'a.b: 1\na.b: 2\n'],
  ])('refuses a values file with %s, before touching the database', async (_, text) => {
    const path = join(dir, `${unique('bad')}.yml`);
    await writeFile(path, text);
    const plan = await parseImportArgs(['--host', 'h', '--serviceId', 's', path]);
    await expect(readImport(plan)).rejects.toBeInstanceOf(ImportUsageError);
  });

  it('an empty values file empties the layer', async () => {
    const path = join(dir, `${unique('empty')}.yml`);
    await writeFile(path, '');
    const plan = await parseImportArgs(['--host', 'h', '--serviceId', 's', path]);
    expect(await readImport(plan)).toEqual({ properties: {}, files: undefined });
  });

  it('refuses a folder holding a file whose name cannot be served', async () => {
    const folder = join(dir, unique('badnames'));
    await mkdir(folder);
    await writeFile(join(folder, 'a b.txt'), 'x');
    const plan = await parseImportArgs(['--host', 'h', '--serviceId', 's', folder]);
    await expect(readImport(plan)).rejects.toBeInstanceOf(ImportUsageError);
  });
});

describe('dev seed', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  const devQuery = { host: 'dev-host', serviceId: 'petstore', envTag: 'dev' };
  const runtimeToken = (): Promise<string> =>
    signed({ sub: 'petstore-runtime', scope: 'portal.r', host: 'dev-host', sid: 'petstore', env: 'dev' });

  const readConfigs = async (): Promise<Record<string, unknown>> => {
    const { res } = await send(api, 'GET', '/config-server/configs', {
      query: devQuery,
      authorization: bearer(await runtimeToken()),
    });
    expect(res.statusCode).toBe(200);
    return res.json<Record<string, unknown>>();
  };

  it('seeds dev-host/petstore/dev once per database: what an operator removed stays removed across restarts', async () => {
    const db = api.app.get(DataSource);
    const dataDir = await mkdtemp(join(tmpdir(), 'bindery-seed-'));
    expect(await seedDevConfig(db, dataDir, keys)).toBe('seeded');
    expect(await seedDevConfig(db, dataDir, keys)).toBe('already-seeded');
    const seeded = await readConfigs();
    expect(seeded).toMatchObject({ 'server.httpPort': 8443, 'server.enableHttps': true, 'petstore.pageSize': 20 });
    for (const [endpoint, name] of [
      ['certs', 'server.crt'],
      ['files', 'logback.xml'],
    ] as const) {
      const { res } = await send(api, 'GET', `/config-server/${endpoint}`, {
        query: devQuery,
        authorization: bearer(await runtimeToken()),
      });
      expect(Object.keys(res.json<object>())).toEqual([name]);
    }

    // An operator replaces the dev layer's properties (removing the other dev keys) and deletes its cert.
    const edit = await send(api, 'PUT', '/config-server/admin/properties', {
      query: devQuery,
      authorization: bearer(await adminToken()),
      payload: { properties: { 'server.httpPort': 9999 } },
    });
    expect(edit.res.statusCode).toBe(200);
    const drop = await send(api, 'DELETE', '/config-server/admin/files', {
      query: { ...devQuery, kind: 'cert' },
      authorization: bearer(await adminToken()),
    });
    expect(drop.res.statusCode).toBe(204);
    const edited = await readConfigs();
    expect(edited).toEqual({
      'server.httpPort': 9999,
      'server.enableHttps': false,
      'petstore.greeting': 'hello from bindery',
      'petstore.pageSize': 20,
    });

    // The next start (same data dir) restores nothing.
    expect(await seedDevConfig(db, dataDir, keys)).toBe('already-seeded');
    expect(await readConfigs()).toEqual(edited);
    // Nor does a start with a new data dir against this database (its layers exist): it only records it.
    const other = await mkdtemp(join(tmpdir(), 'bindery-seed-'));
    expect(await seedDevConfig(db, other, keys)).toBe('layers-exist');
    expect(await readConfigs()).toEqual(edited);
    const certs = await send(api, 'GET', '/config-server/certs', {
      query: devQuery,
      authorization: bearer(await runtimeToken()),
    });
    expect(certs.res.json()).toEqual({});

    // The operator removes both layers entirely: a restart does not bring them back.
    for (const query of [devQuery, { host: 'dev-host', serviceId: 'petstore' }]) {
      for (const target of ['properties', 'files?kind=file'] as const) {
        const [path, kind] = target.split('?kind=');
        const removed = await send(api, 'DELETE', `/config-server/admin/${path ?? ''}`, {
          query: kind === undefined ? query : { ...query, kind },
          authorization: bearer(await adminToken()),
        });
        expect(removed.res.statusCode).toBe(204);
      }
    }
    expect(await readConfigs()).toEqual({});
    expect(await seedDevConfig(db, dataDir, keys)).toBe('already-seeded');
    expect(await seedDevConfig(db, other, keys)).toBe('already-seeded');
    expect(await readConfigs()).toEqual({});
    // The emptied layers keep their rows (version counter and history, DESIGN 14) but hold nothing.
    expect(
      await db.query(
        `select 1 from config_layer l where l.host = 'dev-host' and (
           exists (select 1 from config_property p where p.layer_id = l.layer_id)
           or exists (select 1 from config_file f where f.layer_id = l.layer_id))`,
      ),
    ).toEqual([]);
  });
});
