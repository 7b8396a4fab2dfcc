import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { startApi, unique, type TestApi } from '../support/api.js';
import { callers, token } from '../support/tokens.js';
import {
  adminToken,
  b64,
  bearer,
  expectNoSql,
  expectProblem,
  putProperties,
  send,
  signed,
  type Query,
} from './support.js';

const PROPERTIES = '/config-server/admin/properties';
const FILES = '/config-server/admin/files';

describe('config server admin endpoints', () => {
  let api: TestApi;
  let admin: string;

  beforeAll(async () => {
    api = await startApi();
    admin = bearer(await adminToken());
  });
  afterAll(() => api.close());

  const runtimeGet = async (endpoint: string, query: Query, claims: Record<string, unknown>): Promise<unknown> => {
    const { res } = await send(api, 'GET', `/config-server/${endpoint}`, {
      query,
      authorization: bearer(await signed({ scope: 'portal.r', ...claims })),
    });
    expect(res.statusCode).toBe(200);
    return res.json();
  };

  describe('properties', () => {
    it('PUT replaces the layer, GET reads it back, DELETE empties it', async () => {
      const host = unique('ad-host');
      const query = { host, serviceId: 'petstore', envTag: 'prod' };
      const put = await send(api, 'PUT', PROPERTIES, {
        query,
        authorization: admin,
        payload: { properties: { 'server.httpPort': 8443, 'server.enableHttps': true, 'a.list': [1, 'two'] } },
      });
      expect(put.res.statusCode).toBe(200);
      expect(put.res.headers['content-type']).toMatch(/^application\/json/);
      const layer = {
        host,
        serviceId: 'petstore',
        productId: null,
        productVersion: null,
        envTag: 'prod',
        properties: { 'a.list': [1, 'two'], 'server.enableHttps': true, 'server.httpPort': 8443 },
      };
      expect(put.res.json()).toEqual(layer);
      expect(Object.keys(put.res.json<{ properties: object }>().properties)).toEqual([
        'a.list',
        'server.enableHttps',
        'server.httpPort',
      ]);

      const got = await send(api, 'GET', PROPERTIES, { query, authorization: admin });
      expect(got.res.statusCode).toBe(200);
      expect(got.res.json()).toEqual(layer);

      // A second PUT replaces the whole layer: keys it does not name are gone.
      const replaced = await send(api, 'PUT', PROPERTIES, {
        query,
        authorization: admin,
        payload: { properties: { 'server.httpPort': 9443 } },
      });
      expect(replaced.res.json()).toEqual({ ...layer, properties: { 'server.httpPort': 9443 } });
      expect(await runtimeGet('configs', query, { host, sid: 'petstore', env: 'prod' })).toEqual({
        'server.httpPort': 9443,
      });

      const deleted = await send(api, 'DELETE', PROPERTIES, { query, authorization: admin });
      expect(deleted.res.statusCode).toBe(204);
      expect(deleted.res.body).toBe('');
      const empty = await send(api, 'GET', PROPERTIES, { query, authorization: admin });
      expect(empty.res.json()).toEqual({ ...layer, properties: {} });
      expect(await runtimeGet('configs', query, { host, sid: 'petstore', env: 'prod' })).toEqual({});

      const again = await send(api, 'DELETE', PROPERTIES, { query, authorization: admin });
      expect(again.res.statusCode).toBe(204);
    });

    it('GET of a layer that never existed is empty, with absent address parts as null', async () => {
      const host = unique('ad-none');
      const { res } = await send(api, 'GET', PROPERTIES, {
        query: { host, productId: 'p1', productVersion: '1.0' },
        authorization: admin,
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        host,
        serviceId: null,
        productId: 'p1',
        productVersion: '1.0',
        envTag: null,
        properties: {},
      });
    });

    it('trims address parts and treats blank ones as absent', async () => {
      const host = unique('ad-trim');
      const put = await send(api, 'PUT', PROPERTIES, {
        query: { host: ` ${host} `, serviceId: '\tsvc ', envTag: '  ' },
        authorization: admin,
        payload: { properties: { 'a.b': 'c' } },
      });
      expect(put.res.json()).toMatchObject({ host, serviceId: 'svc', envTag: null });
      const got = await send(api, 'GET', PROPERTIES, { query: { host, serviceId: 'svc' }, authorization: admin });
      expect(got.res.json()).toMatchObject({ properties: { 'a.b': 'c' } });
    });

    it('a PUT of {} empties the layer', async () => {
      const query = { host: unique('ad-emptyput'), serviceId: 's' };
      await putProperties(api, query, { 'a.b': 1 });
      const { res } = await send(api, 'PUT', PROPERTIES, { query, authorization: admin, payload: { properties: {} } });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ properties: {} });
    });

    it('layers are independent: another env, service or host is untouched', async () => {
      const host = unique('ad-indep');
      const a = { host, serviceId: 's' };
      const b = { host, serviceId: 's', envTag: 'dev' };
      await putProperties(api, a, { 'x.y': 'a' });
      await putProperties(api, b, { 'x.y': 'b' });
      await send(api, 'DELETE', PROPERTIES, { query: b, authorization: admin });
      const got = await send(api, 'GET', PROPERTIES, { query: a, authorization: admin });
      expect(got.res.json()).toMatchObject({ properties: { 'x.y': 'a' } });
    });

    it('concurrent PUTs of one new layer each replace it whole', async () => {
      const query = { host: unique('ad-race'), serviceId: 'race' };
      const bodies = Array.from({ length: 8 }, (_, i) => ({ [`k.only${i}`]: i, 'k.shared': i }));
      const results = await Promise.all(
        bodies.map((properties) =>
          send(api, 'PUT', PROPERTIES, { query, authorization: admin, payload: { properties } }),
        ),
      );
      for (const { res } of results) expect(res.statusCode).toBe(200);
      const got = await send(api, 'GET', PROPERTIES, { query, authorization: admin });
      const final = got.res.json<{ properties: Record<string, number> }>().properties;
      expect(bodies).toContainEqual(final);
    });
  });

  describe('files', () => {
    it('PUT, GET and DELETE one kind, leaving the other kind and the properties alone', async () => {
      const host = unique('ad-files');
      const query = { host, serviceId: 'petstore' };
      await putProperties(api, query, { 'a.b': 1 });
      const bytes = Buffer.from([0, 1, 2, 253, 254, 255]);
      const certPut = await send(api, 'PUT', FILES, {
        query: { ...query, kind: 'cert' },
        authorization: admin,
        payload: { files: { 'server.keystore': bytes.toString('base64'), 'ca.pem': b64('ca') } },
      });
      expect(certPut.res.statusCode).toBe(200);
      expect(certPut.res.json()).toEqual({
        host,
        serviceId: 'petstore',
        productId: null,
        productVersion: null,
        envTag: null,
        kind: 'cert',
        files: { 'ca.pem': b64('ca'), 'server.keystore': bytes.toString('base64') },
      });
      const filePut = await send(api, 'PUT', FILES, {
        query: { ...query, kind: 'file' },
        authorization: admin,
        payload: { files: { 'logback.xml': b64('<x/>') } },
      });
      expect(filePut.res.statusCode).toBe(200);

      const certs = await send(api, 'GET', FILES, { query: { ...query, kind: 'cert' }, authorization: admin });
      expect(certs.res.json()).toEqual(certPut.res.json());

      const deleted = await send(api, 'DELETE', FILES, { query: { ...query, kind: 'cert' }, authorization: admin });
      expect(deleted.res.statusCode).toBe(204);
      const afterCerts = await send(api, 'GET', FILES, { query: { ...query, kind: 'cert' }, authorization: admin });
      expect(afterCerts.res.json()).toMatchObject({ kind: 'cert', files: {} });
      const files = await send(api, 'GET', FILES, { query: { ...query, kind: 'file' }, authorization: admin });
      expect(files.res.json()).toMatchObject({ files: { 'logback.xml': b64('<x/>') } });
      const props = await send(api, 'GET', PROPERTIES, { query, authorization: admin });
      expect(props.res.json()).toMatchObject({ properties: { 'a.b': 1 } });
    });

    it('replaces the whole kind: files not named again are gone', async () => {
      const query = { host: unique('ad-freplace'), productId: 'prod', productVersion: '1', kind: 'file' };
      await send(api, 'PUT', FILES, { query, authorization: admin, payload: { files: { 'a.txt': b64('a') } } });
      const { res } = await send(api, 'PUT', FILES, {
        query,
        authorization: admin,
        payload: { files: { 'b.txt': b64('b') } },
      });
      expect(res.json()).toMatchObject({
        productId: 'prod',
        productVersion: '1',
        serviceId: null,
        files: { 'b.txt': b64('b') },
      });
    });
  });

  describe('bad requests (400, nothing written, no SQL)', () => {
    const host = unique('ad-bad');
    const query = { host, serviceId: 'svc' };

    it.each([
      ['a key without a dot', { nodot: 1 }],
      ['a key starting with a dot', { '.a': 1 }],
      ['a key ending with a dot', { 'a.': 1 }],
      ['a key with two dots in a row', { 'a..b': 1 }],
      ['a key with a space', { 'a b.c': 1 }],
      ['a key with a slash', { 'a/b.c': 1 }],
      ['an over-long key', { [`a.${'b'.repeat(300)}`]: 1 }],
      ['a null value', { 'a.b': null }],
      ['a NUL character in a value', { 'a.b': 'x\u0000y' }],
      ['one bad key among good ones', { 'a.b': 1, 'c.d': 2, bad: 3 }],
    ])('properties: %s', async (_, properties) => {
      await putProperties(api, query, { 'keep.me': true });
      const sent = await send(api, 'PUT', PROPERTIES, { query, authorization: admin, payload: { properties } });
      const problem = expectProblem(sent, 400);
      expect(problem.errors).toEqual(
        expect.arrayContaining([expect.objectContaining({ field: expect.stringMatching(/^properties/) })]),
      );
      expectNoSql(sent);
      const got = await send(api, 'GET', PROPERTIES, { query, authorization: admin });
      expect(got.res.json()).toMatchObject({ properties: { 'keep.me': true } });
    });

    it.each([
      ['properties missing', {}],
      ['properties an array', { properties: [['a.b', 1]] }],
      ['properties a string', { properties: 'a.b=1' }],
      ['an unknown body field', { properties: {}, extra: true }],
    ])('properties body: %s', async (_, payload) => {
      const sent = await send(api, 'PUT', PROPERTIES, { query, authorization: admin, payload });
      expectProblem(sent, 400);
      expectNoSql(sent);
    });

    it.each([
      ['both serviceId and productId', { host, serviceId: 's', productId: 'p', productVersion: '1' }, 'serviceId'],
      ['neither serviceId nor productId', { host }, 'serviceId'],
      ['productId without productVersion', { host, productId: 'p' }, 'productVersion'],
      ['productVersion without productId', { host, productVersion: '1' }, 'productId'],
      ['no host', { serviceId: 's' }, 'host'],
      ['a blank host', { host: '  ', serviceId: 's' }, 'host'],
      ['a repeated host', { host: [host, host], serviceId: 's' }, 'host'],
      ['a repeated serviceId', { host, serviceId: ['s', 't'] }, 'serviceId'],
      // An undeclared parameter's name is never echoed (DESIGN 3): it is reported as (query).
      ['an unknown parameter', { host, serviceId: 's', kind: 'cert' }, '(query)'],
      ['an over-long envTag', { host, serviceId: 's', envTag: 'e'.repeat(65) }, 'envTag'],
      ['a control character in host', { host: 'a\u0007b', serviceId: 's' }, 'host'],
    ] as [string, Query, string][])('address: %s', async (_, badQuery, field) => {
      for (const method of ['PUT', 'GET', 'DELETE'] as const) {
        const sent = await send(api, method, PROPERTIES, {
          query: badQuery,
          authorization: admin,
          ...(method === 'PUT' ? { payload: { properties: { 'a.b': 1 } } } : {}),
        });
        const problem = expectProblem(sent, 400);
        expect((problem.errors as { field: string }[]).map((e) => e.field)).toContain(field);
        expectNoSql(sent);
      }
    });

    it.each([
      ['content that is not base64', { 'a.txt': 'not base64!' }],
      ['base64 without padding', { 'a.txt': 'YWI' }],
      ['too much padding', { 'a.txt': 'YQ===' }],
      ['base64 with whitespace', { 'a.txt': 'YW Jj' }],
      ['the URL-safe alphabet', { 'a.txt': '-_-_' }],
      ['content that is a number', { 'a.txt': 42 }],
      ['content that is null', { 'a.txt': null }],
      ['a name with a slash', { 'dir/a.txt': b64('x') }],
      ['a name going up', { '../a.txt': b64('x') }],
      ['a name with a backslash', { 'a\\b.txt': b64('x') }],
      ['a name with two dots in a row', { 'a..txt': b64('x') }],
      ['a name with NUL', { 'a\u0000.txt': b64('x') }],
      ['a name with a line feed', { 'a\n.txt': b64('x') }],
      ['a hidden name', { '.env': b64('x') }],
      ['an empty name', { '': b64('x') }],
      ['a name with a space', { 'a b.txt': b64('x') }],
    ])('files: %s', async (_, files) => {
      const fileQuery = { ...query, kind: 'file' };
      const good = await send(api, 'PUT', FILES, {
        query: fileQuery,
        authorization: admin,
        payload: { files: { 'keep.txt': b64('keep') } },
      });
      expect(good.res.statusCode).toBe(200);
      const sent = await send(api, 'PUT', FILES, { query: fileQuery, authorization: admin, payload: { files } });
      const problem = expectProblem(sent, 400);
      expect((problem.errors as { field: string }[])[0].field).toMatch(/^files/);
      expectNoSql(sent);
      const got = await send(api, 'GET', FILES, { query: fileQuery, authorization: admin });
      expect(got.res.json()).toMatchObject({ files: { 'keep.txt': b64('keep') } });
    });

    it.each([
      ['kind missing', { ...query }],
      ['kind unknown', { ...query, kind: 'key' }],
      ['kind repeated', { ...query, kind: ['cert', 'file'] }],
    ] as [string, Query][])('files: %s', async (_, badQuery) => {
      for (const method of ['PUT', 'GET', 'DELETE'] as const) {
        const sent = await send(api, method, FILES, {
          query: badQuery,
          authorization: admin,
          ...(method === 'PUT' ? { payload: { files: {} } } : {}),
        });
        const problem = expectProblem(sent, 400);
        expect((problem.errors as { field: string }[]).map((e) => e.field)).toContain('kind');
        expectNoSql(sent);
      }
    });
  });

  describe('atomic replace', () => {
    /** A trigger that fails the insert of one marked entry: the failure happens inside the database step. */
    async function withFailingTrigger(
      table: 'config_property' | 'config_file',
      marker: string,
      run: () => Promise<void>,
    ) {
      const db = api.app.get(DataSource);
      const name = `cs_test_fail_${marker.replace(/[^a-z0-9]/g, '_')}`;
      const column = table === 'config_property' ? 'property_key' : 'file_name';
      await db.query(`
        create function ${name}() returns trigger language plpgsql as $$
        begin
          if new.${column} = '${marker}' then
            raise exception 'forced failure' using errcode = '23514';
          end if;
          return new;
        end $$`);
      await db.query(`create trigger ${name} before insert on ${table} for each row execute function ${name}()`);
      try {
        await run();
      } finally {
        await db.query(`drop trigger ${name} on ${table}`);
        await db.query(`drop function ${name}()`);
      }
    }

    it('a PUT of properties failing in the database leaves the old layer intact', async () => {
      const host = unique('ad-atomic');
      const query = { host, serviceId: 'svc', envTag: 'prod' };
      const old = { 'old.one': 1, 'old.two': 'two', 'both.key': 'old' };
      await putProperties(api, query, old);
      const marker = `boom.${unique('k').replace('-', '')}`;
      await withFailingTrigger('config_property', marker, async () => {
        const sent = await send(api, 'PUT', PROPERTIES, {
          query,
          authorization: admin,
          payload: { properties: { 'both.key': 'new', 'new.key': true, [marker]: 1 } },
        });
        expect(sent.res.statusCode).toBe(500);
        expect(sent.res.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(sent.res.body).not.toContain('forced failure');
      });
      const got = await send(api, 'GET', PROPERTIES, { query, authorization: admin });
      expect(got.res.json()).toMatchObject({ properties: old });
      expect(await runtimeGet('configs', query, { host, sid: 'svc', env: 'prod' })).toEqual(old);
    });

    it('a PUT of files failing in the database leaves the old files intact', async () => {
      const host = unique('ad-atomicf');
      const query = { host, productId: 'prod', productVersion: '1.0', kind: 'cert' };
      const old = { 'a.pem': b64('old a'), 'b.pem': b64('old b') };
      await send(api, 'PUT', FILES, { query, authorization: admin, payload: { files: old } });
      const marker = `${unique('boom')}.pem`;
      await withFailingTrigger('config_file', marker, async () => {
        const sent = await send(api, 'PUT', FILES, {
          query,
          authorization: admin,
          payload: { files: { 'a.pem': b64('new a'), [marker]: b64('x') } },
        });
        expect(sent.res.statusCode).toBe(500);
      });
      const got = await send(api, 'GET', FILES, { query, authorization: admin });
      expect(got.res.json()).toMatchObject({ files: old });
    });
  });

  describe('authorization (no SQL before it is decided)', () => {
    const routes: ['PUT' | 'GET' | 'DELETE', string, Query, unknown][] = [
      ['PUT', PROPERTIES, { host: 'h', serviceId: 's' }, { properties: { 'a.b': 1 } }],
      ['GET', PROPERTIES, { host: 'h', serviceId: 's' }, undefined],
      ['DELETE', PROPERTIES, { host: 'h', serviceId: 's' }, undefined],
      ['PUT', FILES, { host: 'h', serviceId: 's', kind: 'file' }, { files: {} }],
      ['GET', FILES, { host: 'h', serviceId: 's', kind: 'file' }, undefined],
      ['DELETE', FILES, { host: 'h', serviceId: 's', kind: 'file' }, undefined],
    ];

    it.each(routes)('%s %s: 401 without a token', async (method, path, query, payload) => {
      const sent = await send(api, method, path, { query, ...(payload === undefined ? {} : { payload }) });
      expectProblem(sent, 401);
      expect(sent.res.headers['www-authenticate']).toBe('Bearer realm="bindery"');
      expectNoSql(sent);
    });

    it.each(routes)('%s %s: 401 with an expired admin token', async (method, path, query, payload) => {
      const jwt = await token({ sub: 'root', scope: 'portal.admin' }, { expiresIn: -600 });
      const sent = await send(api, method, path, {
        query,
        authorization: bearer(jwt),
        ...(payload === undefined ? {} : { payload }),
      });
      expectProblem(sent, 401);
      expectNoSql(sent);
    });

    it.each(routes)('%s %s: 403 for portal.w, even bound to the layer', async (method, path, query, payload) => {
      const jwt = await callers.writer('h', { sid: 's' });
      const sent = await send(api, method, path, {
        query,
        authorization: bearer(jwt),
        ...(payload === undefined ? {} : { payload }),
      });
      const problem = expectProblem(sent, 403);
      expect(problem.detail).toContain('portal.admin');
      expect(sent.res.headers['www-authenticate']).toContain('error="insufficient_scope"');
      expectNoSql(sent);
    });

    it.each(routes)('%s %s: 403 for portal.r', async (method, path, query, payload) => {
      const jwt = await callers.reader('h');
      const sent = await send(api, method, path, {
        query,
        authorization: bearer(jwt),
        ...(payload === undefined ? {} : { payload }),
      });
      expectProblem(sent, 403);
      expectNoSql(sent);
    });

    it('401 and 403 come before body and query validation', async () => {
      const bad = { host: ['a', 'b'] };
      const none = await send(api, 'PUT', PROPERTIES, { query: bad, payload: { nope: 1 } });
      expect(none.res.statusCode).toBe(401);
      const reader = await send(api, 'PUT', PROPERTIES, {
        query: bad,
        authorization: bearer(await callers.reader('h')),
        payload: { nope: 1 },
      });
      expect(reader.res.statusCode).toBe(403);
    });
  });
});
