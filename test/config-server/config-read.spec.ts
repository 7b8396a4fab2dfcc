import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse as parseYaml } from 'yaml';
import { startApi, unique, type TestApi } from '../support/api.js';
import {
  bearer,
  ENDPOINTS,
  expectBindingRejection,
  putFiles,
  putProperties,
  send,
  SENTENCES,
  signed,
  type Query,
} from './support.js';

const HOST = unique('rd-host');
const SID = unique('rd-svc');
const ENV = 'staging';
const PRODUCT = unique('rd-prod');
const VERSION = '2.1.0';

const PRODUCT_LAYER: Query = { host: HOST, productId: PRODUCT, productVersion: VERSION };
const PRODUCT_ENV_LAYER: Query = { ...PRODUCT_LAYER, envTag: ENV };
const SERVICE_LAYER: Query = { host: HOST, serviceId: SID };
const SERVICE_ENV_LAYER: Query = { ...SERVICE_LAYER, envTag: ENV };
const ALL_LAYERS: Query = { host: HOST, serviceId: SID, productId: PRODUCT, productVersion: VERSION, envTag: ENV };

const runtime = (extra: Record<string, unknown> = {}): Promise<string> =>
  signed({ sub: 'rt', scope: 'portal.r', host: HOST, sid: SID, env: ENV, ...extra });

describe('config server reads', () => {
  let api: TestApi;

  const get = async (
    endpoint: string,
    query: Query,
    headers: Record<string, string> = {},
    jwt?: string,
  ): ReturnType<typeof send> =>
    send(api, 'GET', `/config-server/${endpoint}`, {
      query,
      authorization: bearer(jwt ?? (await runtime())),
      headers,
    });

  beforeAll(async () => {
    api = await startApi();
    // Each layer names itself in `layer.N` and overrides the `shared.*` keys of the layers below it.
    await putProperties(api, PRODUCT_LAYER, {
      'shared.all': 'product',
      'shared.productOnly': 'product',
      'shared.upToProductEnv': 'product',
      'shared.upToService': 'product',
      'layer.product': true,
    });
    await putProperties(api, PRODUCT_ENV_LAYER, {
      'shared.all': 'product-env',
      'shared.upToProductEnv': 'product-env',
      'shared.upToService': 'product-env',
      'layer.productEnv': true,
    });
    await putProperties(api, SERVICE_LAYER, {
      'shared.all': 'service',
      'shared.upToService': 'service',
      'layer.service': true,
    });
    await putProperties(api, SERVICE_ENV_LAYER, { 'shared.all': 'service-env', 'layer.serviceEnv': true });
    // Neighbours that must never leak into the answers below.
    const other = { 'shared.all': 'LEAK', 'layer.leak': true };
    await putProperties(api, { ...SERVICE_ENV_LAYER, host: unique('rd-other-host') }, other);
    await putProperties(api, { ...SERVICE_ENV_LAYER, serviceId: unique('rd-other-svc') }, other);
    await putProperties(api, { ...SERVICE_LAYER, envTag: 'prod' }, other);
    await putProperties(api, { ...PRODUCT_LAYER, productVersion: '2.1.1' }, other);
    await putProperties(api, { ...PRODUCT_ENV_LAYER, productId: unique('rd-other-prod') }, other);
  });
  afterAll(() => api.close());

  describe('layering (product, product+env, service, service+env)', () => {
    it('merges all four layers, the higher layer winning per key', async () => {
      const { res } = await get('configs', ALL_LAYERS);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({
        'layer.product': true,
        'layer.productEnv': true,
        'layer.service': true,
        'layer.serviceEnv': true,
        'shared.all': 'service-env',
        'shared.productOnly': 'product',
        'shared.upToProductEnv': 'product-env',
        'shared.upToService': 'service',
      });
    });

    it('without envTag only the all-environment layers apply', async () => {
      const { productId, productVersion } = PRODUCT_LAYER;
      const { res } = await get('configs', {
        ...SERVICE_LAYER,
        productId: productId,
        productVersion: productVersion,
      });
      expect(res.json()).toEqual({
        'layer.product': true,
        'layer.service': true,
        'shared.all': 'service',
        'shared.productOnly': 'product',
        'shared.upToProductEnv': 'product',
        'shared.upToService': 'service',
      });
    });

    it('a product-level request sees only the product layers', async () => {
      const { res } = await get('configs', PRODUCT_ENV_LAYER, {}, await runtime({ sid: undefined }));
      expect(res.json()).toEqual({
        'layer.product': true,
        'layer.productEnv': true,
        'shared.all': 'product-env',
        'shared.productOnly': 'product',
        'shared.upToProductEnv': 'product-env',
        'shared.upToService': 'product-env',
      });
    });

    it('a service request without product parameters sees only the service layers', async () => {
      const { res } = await get('configs', SERVICE_ENV_LAYER);
      expect(res.json()).toEqual({
        'layer.service': true,
        'layer.serviceEnv': true,
        'shared.all': 'service-env',
        'shared.upToService': 'service',
      });
    });

    it('files and certs are layered the same way, per name', async () => {
      const host = unique('rd-files');
      const jwt = await signed({ scope: 'portal.r', host, sid: SID, env: ENV });
      const layers: [Query, string][] = [
        [{ host, productId: PRODUCT, productVersion: VERSION }, 'product'],
        [{ host, productId: PRODUCT, productVersion: VERSION, envTag: ENV }, 'product-env'],
        [{ host, serviceId: SID }, 'service'],
        [{ host, serviceId: SID, envTag: ENV }, 'service-env'],
      ];
      for (const [query, label] of layers) {
        await putFiles(api, query, 'file', { 'shared.txt': label, [`${label}.txt`]: label });
        await putFiles(api, query, 'cert', { 'shared.pem': `cert ${label}` });
      }
      const all = { host, serviceId: SID, productId: PRODUCT, productVersion: VERSION, envTag: ENV };
      const files = await get('files', all, {}, jwt);
      const b = (s: string): string => Buffer.from(s).toString('base64');
      expect(files.res.json()).toEqual({
        'product-env.txt': b('product-env'),
        'product.txt': b('product'),
        'service-env.txt': b('service-env'),
        'service.txt': b('service'),
        'shared.txt': b('service-env'),
      });
      const certs = await get('certs', { host, productId: PRODUCT, productVersion: VERSION, envTag: ENV }, {}, jwt);
      expect(certs.res.json()).toEqual({ 'shared.pem': b('cert product-env') });
    });

    it.each(ENDPOINTS)('%s: {} when there is nothing at the address', async (endpoint) => {
      const host = unique('rd-empty');
      const jwt = await signed({ scope: 'portal.r', host, sid: 'nothing' });
      const { res } = await get(endpoint, { host, serviceId: 'nothing' }, {}, jwt);
      expect(res.statusCode).toBe(200);
      expect(res.body).toBe('{}');
    });
  });

  describe('typed values', () => {
    const host = unique('rd-typed');
    const query = { host, serviceId: 'typed' };
    const values = {
      'b.list': ['a', 1, true, null, { deep: [1.5] }],
      'a.string': 'text',
      'a.numericString': '8443',
      'a.booleanString': 'true',
      'a.int': 8443,
      'a.negative': -3,
      'a.float': 0.25,
      'a.bool': false,
      'a.empty': '',
      'c.map': { nested: { x: 1 }, y: 'z' },
      'a.multiline': 'line one\nline two',
      'a.unicode': 'grüße ✓',
      'a.dotted.property.name': 'ok',
    };

    beforeAll(() => putProperties(api, query, values));

    it('keeps each JSON type and sorts keys', async () => {
      const jwt = await signed({ scope: 'portal.r', host, sid: 'typed' });
      const { res } = await get('configs', query, {}, jwt);
      expect(res.json()).toEqual(values);
      const keys = Object.keys(JSON.parse(res.body) as object);
      expect(keys).toEqual([...Object.keys(values)].sort());
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    });

    it.each(['configs', 'certs', 'files'] as const)(
      '%s answers are private to the token: Cache-Control private, no-cache and Vary Authorization, Accept',
      async (endpoint) => {
        const jwt = await signed({ scope: 'portal.r', host, sid: 'typed' });
        const { res } = await get(endpoint, query, {}, jwt);
        expect(res.statusCode).toBe(200);
        expect(res.headers['cache-control']).toBe('private, no-cache');
        expect(res.headers.vary).toBe('Authorization, Accept');
      },
    );

    it('answers YAML (a values.yml) with Accept: application/yaml', async () => {
      const jwt = await signed({ scope: 'portal.r', host, sid: 'typed' });
      const { res } = await get('configs', query, { accept: 'application/yaml' }, jwt);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/yaml; charset=utf-8');
      expect(res.headers.vary).toBe('Authorization, Accept');
      expect(parseYaml(res.body)).toEqual(values);
      expect(res.body).toContain('a.int: 8443\n');
      expect(res.body).toContain('a.bool: false\n');
      // Strings that look like other types stay strings.
      expect(res.body).toMatch(/a\.numericString: "8443"\n/);
      expect(res.body).toMatch(/a\.booleanString: "true"\n/);
      const keys = res.body
        .split('\n')
        .filter((line) => /^[a-z]/.test(line))
        .map((line) => line.split(':')[0]);
      expect(keys).toEqual([...Object.keys(values)].sort());
    });

    it.each([
      ['application/json', false],
      ['*/*', false],
      ['text/html', false],
      ['application/x-yaml', true],
      ['text/yaml', true],
      ['application/json;q=0.5, application/yaml', true],
      ['application/yaml;q=0.5, application/json', false],
      ['application/yaml, */*;q=0.1', true],
      ['application/json, application/yaml', false],
    ])('Accept: %s gives YAML: %s', async (accept, yaml) => {
      const jwt = await signed({ scope: 'portal.r', host, sid: 'typed' });
      const { res } = await get('configs', query, { accept }, jwt);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe(
        yaml ? 'application/yaml; charset=utf-8' : 'application/json; charset=utf-8',
      );
    });

    it('the empty configuration in YAML is an empty map', async () => {
      const h = unique('rd-empty-yaml');
      const jwt = await signed({ scope: 'portal.r', host: h, sid: 's' });
      const { res } = await get('configs', { host: h, serviceId: 's' }, { accept: 'application/yaml' }, jwt);
      expect(parseYaml(res.body)).toEqual({});
    });
  });

  describe('binary files', () => {
    const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

    it.each(['cert', 'file'] as const)('%s: bytes 0..255 survive the base64 round trip', async (kind) => {
      const host = unique('rd-bin');
      const query = { host, serviceId: 'bin', envTag: ENV };
      await putFiles(api, query, kind, { 'all.bin': ALL_BYTES, 'empty.bin': Buffer.alloc(0) });
      const jwt = await signed({ scope: 'portal.r', host, sid: 'bin', env: ENV });
      const { res } = await get(kind === 'cert' ? 'certs' : 'files', query, {}, jwt);
      const body = res.json<Record<string, string>>();
      expect(Object.keys(body)).toEqual(['all.bin', 'empty.bin']);
      expect(Buffer.from(body['all.bin'], 'base64').equals(ALL_BYTES)).toBe(true);
      expect(body['empty.bin']).toBe('');
      const other = await get(kind === 'cert' ? 'files' : 'certs', query, {}, jwt);
      expect(other.res.json()).toEqual({});
    });
  });

  describe('ETag and If-None-Match', () => {
    it.each(ENDPOINTS)('%s: 304 for a matching ETag, 200 again after a change', async (endpoint) => {
      const host = unique('rd-etag');
      const query = { host, serviceId: 'etag' };
      const write = (label: string): Promise<void> =>
        endpoint === 'configs'
          ? putProperties(api, query, { 'etag.label': label })
          : putFiles(api, query, endpoint === 'certs' ? 'cert' : 'file', { 'etag.txt': label });
      await write('one');
      const jwt = await signed({ scope: 'portal.r', host, sid: 'etag' });
      const first = await get(endpoint, query, {}, jwt);
      const etag = first.res.headers.etag as string;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{16,}"$/);

      const again = await get(endpoint, query, {}, jwt);
      expect(again.res.headers.etag).toBe(etag);

      for (const ifNoneMatch of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
        const cached = await get(endpoint, query, { 'if-none-match': ifNoneMatch }, jwt);
        expect(cached.res.statusCode).toBe(304);
        expect(cached.res.body).toBe('');
        expect(cached.res.headers.etag).toBe(etag);
      }
      const stale = await get(endpoint, query, { 'if-none-match': '"something-else"' }, jwt);
      expect(stale.res.statusCode).toBe(200);

      await write('two');
      const changed = await get(endpoint, query, { 'if-none-match': etag }, jwt);
      expect(changed.res.statusCode).toBe(200);
      expect(changed.res.headers.etag).not.toBe(etag);
    });

    it('JSON and YAML of the same configuration have different ETags', async () => {
      const json = await get('configs', SERVICE_ENV_LAYER);
      const yaml = await get('configs', SERVICE_ENV_LAYER, { accept: 'application/yaml' });
      expect(json.res.headers.etag).not.toBe(yaml.res.headers.etag);
      const crossed = await get('configs', SERVICE_ENV_LAYER, {
        accept: 'application/yaml',
        'if-none-match': json.res.headers.etag as string,
      });
      expect(crossed.res.statusCode).toBe(200);
    });

    it('If-None-Match never bypasses the binding rule', async () => {
      const ok = await get('configs', SERVICE_ENV_LAYER);
      const sent = await get(
        'configs',
        SERVICE_ENV_LAYER,
        { 'if-none-match': ok.res.headers.etag as string },
        await runtime({ sid: 'someone-else' }),
      );
      expectBindingRejection(sent, SENTENCES.sid);
    });
  });

  it('with enforcement on (the default) there is no start-up warning about it', () => {
    expect(api.logs.raw.some((line) => line.includes('enforcement disabled'))).toBe(false);
  });
});

describe('config server in the OpenAPI document', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(() => api.close());

  it('documents the runtime reads (with the text/plain binding 403) and the admin routes', async () => {
    const res = await api.app.inject({ method: 'GET', url: '/docs/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json<{
      paths: Record<string, Record<string, { responses: Record<string, { content?: object }> }>>;
    }>();
    for (const endpoint of ENDPOINTS) {
      const op = doc.paths[`/config-server/${endpoint}`]?.get;
      expect(Object.keys(op?.responses ?? {}).sort()).toEqual(['200', '304', '400', '401', '403', '414', '503']);
      expect(Object.keys(op.responses['403'].content ?? {})).toEqual(['application/problem+json', 'text/plain']);
    }
    for (const path of ['/config-server/admin/properties', '/config-server/admin/files']) {
      expect(Object.keys(doc.paths[path] ?? {}).sort()).toEqual(['delete', 'get', 'put']);
    }
  });
});
