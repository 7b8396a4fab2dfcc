import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DOCS_CSP } from '#platform';
import { call, startApi, type TestApi } from '../support/api.js';
import { startController, WS_PATH, type TestController } from '../support/controller.js';

interface Schema {
  $ref?: string;
  type?: string;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  required?: string[];
}
interface Content {
  schema?: Schema;
}
interface Response {
  description?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, Content>;
}
interface Operation {
  security?: Record<string, string[]>[];
  responses: Record<string, Response>;
  parameters?: { name: string; in: string; required?: boolean; schema?: Schema }[];
  requestBody?: { content: Record<string, Content> };
  tags?: string[];
}
interface OpenApiDocument {
  info: { title: string; description: string };
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { scheme: string }>; schemas: Record<string, Schema> };
}

/** Routes anyone may call (no token): documented, but without security. */
const PUBLIC_PATHS = ['/health/live', '/health/ready', '/metrics'];

/** One documented operation: `METHOD path`, its response statuses, and whether it takes a body. */
type Expected = readonly [path: string, method: string, statuses: readonly string[], body: boolean];

function operation(doc: OpenApiDocument, path: string, method: string): Operation {
  const op = doc.paths[path]?.[method];
  if (op === undefined) throw new Error(`${method.toUpperCase()} ${path} is not in the document`);
  return op;
}

function component(doc: OpenApiDocument, schema: Schema): Schema {
  if (schema.$ref === undefined) return schema;
  const name = schema.$ref.replace('#/components/schemas/', '');
  const found = doc.components.schemas[name];
  if (found === undefined) throw new Error(`dangling reference ${schema.$ref}`);
  return found;
}

/** True when `schema` says something about the shape: never `{}` nor an object without properties. */
function described(doc: OpenApiDocument, schema: Schema | undefined): boolean {
  if (schema === undefined) return false;
  const resolved = component(doc, schema);
  if (resolved.enum !== undefined) return true;
  if (resolved.type === 'array') return described(doc, resolved.items);
  if (resolved.type !== undefined && resolved.type !== 'object') return true;
  if (resolved.additionalProperties !== undefined && resolved.additionalProperties !== false) return true;
  return Object.keys(resolved.properties ?? {}).length > 0;
}

function authenticatedOperations(doc: OpenApiDocument): string[] {
  return Object.entries(doc.paths)
    .filter(([path]) => !PUBLIC_PATHS.includes(path) && !path.startsWith('/docs'))
    .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`))
    .sort();
}

/** Every reference resolves and no component is an empty object. */
function expectNoEmptySchemas(doc: OpenApiDocument): void {
  const refs = new Set(JSON.stringify(doc).match(/#\/components\/schemas\/[A-Za-z0-9_.-]+/g) ?? []);
  for (const ref of refs) {
    expect({ ref, described: described(doc, { $ref: ref }) }).toEqual({ ref, described: true });
  }
}

/** Every operation can also answer 414 and 503 (database unreachable); one with a body 413 and 415. */
function withShared(statuses: readonly string[], body: boolean): string[] {
  return [...statuses, '414', '503', ...(body ? ['413', '415'] : [])].sort();
}

/** Statuses, bearer security, problem+json errors, a described body and described success bodies. */
function expectDocumented(doc: OpenApiDocument, [path, method, statuses, body]: Expected): void {
  const op = operation(doc, path, method);
  expect(Object.keys(op.responses).sort()).toEqual(withShared(statuses, body));
  expect(op.security).toEqual([{ bearer: [] }]);
  for (const [status, response] of Object.entries(op.responses)) {
    if (Number(status) >= 400) {
      expect(response.content?.['application/problem+json']?.schema).toEqual({
        $ref: '#/components/schemas/Problem',
      });
    } else if (status !== '204' && status !== '304') {
      const schemas = Object.values(response.content ?? {}).map((content) => content.schema);
      expect(schemas.length).toBeGreaterThan(0);
      for (const schema of schemas) expect(described(doc, schema)).toBe(true);
    }
  }
  if (body) {
    expect(described(doc, op.requestBody?.content['application/json']?.schema)).toBe(true);
  } else {
    expect(op.requestBody).toBeUndefined();
  }
}

const TAG_ROUTES: Expected[] = [
  ['/tags', 'post', ['201', '400', '401', '403', '409'], true],
  ['/tags', 'get', ['200', '400', '401', '403'], false],
  ['/tags/{tagId}', 'get', ['200', '400', '401', '403', '404'], false],
  ['/tags/{tagId}/entities', 'get', ['200', '400', '401', '403', '404'], false],
  ['/tags/batch', 'post', ['200', '400', '401', '403', '409'], true],
  ['/events', 'get', ['200', '400', '401', '403', '410'], false],
  ['/registry/instances', 'get', ['200', '400', '401', '403'], false],
  ['/registry/changes', 'get', ['200', '401', '403'], false],
  ['/tags/{tagId}', 'put', ['200', '400', '401', '403', '404', '409', '412'], true],
  ['/tags/{tagId}', 'delete', ['204', '401', '403', '404', '412'], false],
];
const ENTITY_PATHS = ['schemas', 'products', 'documents'] as const;
const ENTITY_ROUTES: Expected[] = ENTITY_PATHS.flatMap((type): Expected[] => [
  [`/${type}`, 'post', ['201', '400', '401', '403', '409'], true],
  [`/${type}`, 'get', ['200', '400', '401', '403'], false],
  [`/${type}/{id}`, 'get', ['200', '401', '403', '404'], false],
  [`/${type}/{id}`, 'put', ['200', '400', '401', '403', '404', '412'], true],
  [`/${type}/{id}`, 'delete', ['204', '401', '403', '404', '412'], false],
  [`/${type}/{id}/tags`, 'get', ['200', '401', '403', '404'], false],
  [`/${type}/{id}/tags`, 'put', ['200', '400', '401', '403', '404', '412'], true],
]);
const CONFIG_ROUTES: Expected[] = [
  ...['configs', 'certs', 'files'].map((what): Expected => [
    `/config-server/${what}`,
    'get',
    ['200', '304', '400', '401', '403'],
    false,
  ]),
  ...['properties', 'files'].flatMap((what): Expected[] => [
    [`/config-server/admin/${what}`, 'put', ['200', '400', '401', '403', '412'], true],
    [`/config-server/admin/${what}`, 'get', ['200', '400', '401', '403'], false],
    [`/config-server/admin/${what}`, 'delete', ['204', '400', '401', '403', '412'], false],
  ]),
  ['/config-server/admin/layers', 'get', ['200', '400', '401', '403'], false],
  ['/config-server/admin/history', 'get', ['200', '400', '401', '403'], false],
  ['/config-server/admin/history/{version}', 'get', ['200', '400', '401', '403', '404'], false],
  ['/config-server/admin/rollback', 'post', ['200', '400', '401', '403', '404', '412', '428'], false],
  ['/config-server/admin/keys', 'get', ['200', '401', '403'], false],
  ['/config-server/admin/keys/rewrap', 'post', ['200', '401', '403'], false],
];
const API_ROUTES = [...TAG_ROUTES, ...ENTITY_ROUTES, ...CONFIG_ROUTES];

let api: TestApi;
let doc: OpenApiDocument;
beforeAll(async () => {
  api = await startApi();
  const res = await call(api, 'GET', '/docs/openapi.json');
  expect(res.statusCode).toBe(200);
  doc = res.json<OpenApiDocument>();
});
afterAll(() => api.close());

describe('OpenAPI document at /docs/openapi.json', () => {
  it('declares the bearer scheme and the problem schema', () => {
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.schemas.Problem).toBeDefined();
    expect(doc.components.schemas.TagView).toBeDefined();
  });

  it.each(TAG_ROUTES)('%s %s documents its responses and security', (path, method, statuses, body) => {
    const op = doc.paths[path]?.[method];
    expect(op).toBeDefined();
    expect(Object.keys(op.responses).sort()).toEqual(withShared(statuses, body));
    expect(op.security).toEqual([{ bearer: [] }]);
  });

  it('documents list parameters and the request body', () => {
    const names = doc.paths['/tags'].get.parameters!.map((p) => p.name).sort();
    expect(names).toEqual([
      'cursor',
      'hostId',
      'include',
      'limit',
      'offset',
      'q',
      'sort',
      'tagDesc',
      'tagName',
      'total',
    ]);
    expect(doc.paths['/tags'].post.requestBody).toBeDefined();
  });

  it('serves the HTML page at /docs under its CSP, which no other route carries', async () => {
    const res = await call(api, 'GET', '/docs');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.headers['content-security-policy']).toBe(DOCS_CSP);
    for (const path of ['/docs/', '/docs/swagger-ui-init.js', '/docs/swagger-ui-bundle.js']) {
      const part = await call(api, 'GET', path);
      expect([path, part.statusCode, part.headers['content-security-policy']]).toEqual([path, 200, DOCS_CSP]);
    }
    const other = await call(api, 'GET', '/health/live');
    expect(other.headers['content-security-policy']).toBeUndefined();
  });

  it('lists exactly the tags, entity and config-server operations as authenticated', () => {
    expect(authenticatedOperations(doc)).toEqual(
      API_ROUTES.map(([path, method]) => `${method.toUpperCase()} ${path}`).sort(),
    );
  });

  it.each(API_ROUTES.map((route) => [`${route[1].toUpperCase()} ${route[0]}`, route] as const))(
    '%s documents statuses, bearer security, problem errors, body and success schemas',
    (_, route) => expectDocumented(doc, route),
  );

  it('resolves every schema reference to a described schema (no empty objects)', () => {
    expectNoEmptySchemas(doc);
  });

  it('documents health and metrics as public routes', () => {
    for (const path of PUBLIC_PATHS) {
      const op = operation(doc, path, 'get');
      // Declared, not forgotten: an empty requirement says no token is needed.
      expect(op.security).toEqual([]);
      expect(described(doc, Object.values(op.responses['200']?.content ?? {})[0]?.schema)).toBe(true);
    }
    expect(Object.keys(operation(doc, '/health/ready', 'get').responses).sort()).toEqual(['200', '414', '503']);
    expect(Object.keys(operation(doc, '/health/live', 'get').responses).sort()).toEqual(['200', '414']);
  });

  describe.each(ENTITY_PATHS)('/%s', (type) => {
    const typeName = `${type[0].toUpperCase()}${type.slice(1, -1)}`;
    const idField = `${type.slice(0, -1)}Id`;

    it('describes the entity view built from its definition, and the page envelope', () => {
      const view = doc.components.schemas[`${typeName}View`];
      expect(Object.keys(view.properties ?? {})).toEqual(
        expect.arrayContaining([idField, 'hostId', 'updateUser', 'updateTs', 'aggregateVersion', 'tagIds']),
      );
      expect(view.required).toContain(idField);
      expect(view.properties?.tagIds).toMatchObject({ type: 'array', items: { type: 'string' } });
      const page = doc.components.schemas[`${typeName}Page`];
      expect(page.properties).toEqual({
        total: expect.objectContaining({ type: 'integer' }),
        next: expect.objectContaining({ type: 'string' }),
        [type]: { type: 'array', items: { $ref: `#/components/schemas/${typeName}View` } },
      });
      // Absent on a cursor page (total) and on the last page (next): DESIGN 4.2.
      expect(page.required).toEqual([type]);
      const list = operation(doc, `/${type}`, 'get');
      expect(list.responses['200']?.content?.['application/json']?.schema).toEqual({
        $ref: `#/components/schemas/${typeName}Page`,
      });
      expect(list.tags).toEqual([type]);
    });

    it('documents the body, the list query, Location, ETag and If-Match', () => {
      const create = operation(doc, `/${type}`, 'post');
      expect(create.requestBody?.content['application/json']?.schema).toEqual({
        $ref: `#/components/schemas/${typeName}BodyDto`,
      });
      const body = doc.components.schemas[`${typeName}BodyDto`];
      expect(Object.keys(body.properties ?? {})).toEqual(expect.arrayContaining([idField, 'hostId', 'tagIds']));
      expect(Object.keys(create.responses['201']?.headers ?? {}).sort()).toEqual(['ETag', 'Location']);
      const names = operation(doc, `/${type}`, 'get')
        .parameters!.map((p) => p.name)
        .sort();
      expect(names).toEqual(['cursor', 'hostId', 'limit', 'offset', 'sort', 'tagMatch', 'tagNames', 'total']);
      const tagNames = operation(doc, `/${type}`, 'get').parameters!.find((p) => p.name === 'tagNames');
      expect(tagNames?.schema).toMatchObject({ type: 'array', items: { type: 'string' } });
      for (const [path, method] of [
        [`/${type}/{id}`, 'put'],
        [`/${type}/{id}`, 'delete'],
        [`/${type}/{id}/tags`, 'put'],
      ] as const) {
        const params = operation(doc, path, method).parameters ?? [];
        expect(params.find((p) => p.name === 'If-Match')).toMatchObject({ in: 'header', required: false });
        expect(params.find((p) => p.name === 'id')).toMatchObject({ in: 'path', required: true });
      }
      expect(Object.keys(operation(doc, `/${type}/{id}`, 'get').responses['200']?.headers ?? {})).toEqual(['ETag']);
    });

    it('documents the /tags sub-resource: an array of tags, and the tagIds body', () => {
      expect(operation(doc, `/${type}/{id}/tags`, 'get').responses['200']?.content?.['application/json']).toEqual({
        schema: { type: 'array', items: { $ref: '#/components/schemas/TagView' } },
      });
      const put = operation(doc, `/${type}/{id}/tags`, 'put');
      expect(put.requestBody?.content['application/json']?.schema).toEqual({
        $ref: '#/components/schemas/TagIdsDto',
      });
      expect(doc.components.schemas.TagIdsDto).toMatchObject({
        required: ['tagIds'],
        properties: { tagIds: { type: 'array', items: { type: 'string' } } },
      });
    });
  });
});

describe("the controller's OpenAPI document", () => {
  let controller: TestController;
  let controllerDoc: OpenApiDocument;
  beforeAll(async () => {
    controller = await startController();
    const res = await fetch(`${controller.httpUrl}/docs/openapi.json`);
    expect(res.status).toBe(200);
    controllerDoc = (await res.json()) as OpenApiDocument;
  });
  afterAll(() => controller.close());

  it('is titled for the controller and points at the WebSocket protocol', () => {
    expect(controllerDoc.info.title).toBe('Bindery controller');
    expect(controllerDoc.info.description).toContain(WS_PATH);
    expect(controllerDoc.info.description).toContain('docs/controller.md');
    expect(controllerDoc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('documents GET /instances: query, page shape, problem errors and bearer security', () => {
    expect(authenticatedOperations(controllerDoc)).toEqual(['GET /instances']);
    expectDocumented(controllerDoc, ['/instances', 'get', ['200', '400', '401', '403'], false]);
    const op = operation(controllerDoc, '/instances', 'get');
    const names = op.parameters!.map((p) => p.name).sort();
    expect(names).toEqual(['cursor', 'envTag', 'hostId', 'limit', 'offset', 'serviceId', 'status', 'total']);
    const page = component(controllerDoc, op.responses['200'].content!['application/json'].schema!);
    expect(page.properties?.instances).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/InstanceView' },
    });
    expect(Object.keys(controllerDoc.components.schemas.InstanceView?.properties ?? {})).toEqual(
      expect.arrayContaining(['runtimeInstanceId', 'serviceId', 'status', 'tags', 'lastSeenTs']),
    );
    expectNoEmptySchemas(controllerDoc);
  });

  it('documents health and metrics as public routes and serves the page at /docs', async () => {
    for (const path of PUBLIC_PATHS) expect(operation(controllerDoc, path, 'get').security).toEqual([]);
    const res = await fetch(`${controller.httpUrl}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.headers.get('content-security-policy')).toBe(DOCS_CSP);
  });
});
