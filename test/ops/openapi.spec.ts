import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, startApi, type TestApi } from '../support/api.js';

interface Operation {
  security?: Record<string, string[]>[];
  responses: Record<string, unknown>;
  parameters?: { name: string; in: string }[];
  requestBody?: unknown;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, { scheme: string }>; schemas: Record<string, unknown> };
}

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

  it.each([
    ['/tags', 'post', ['201', '400', '401', '403', '409']],
    ['/tags', 'get', ['200', '400', '401', '403']],
    ['/tags/{tagId}', 'get', ['200', '401', '403', '404']],
    ['/tags/{tagId}', 'put', ['200', '400', '401', '403', '404', '409', '412']],
    ['/tags/{tagId}', 'delete', ['204', '401', '403', '404', '412']],
  ])('%s %s documents its responses and security', (path, method, statuses) => {
    const op = doc.paths[path]?.[method];
    expect(op).toBeDefined();
    expect(Object.keys(op.responses).sort()).toEqual(statuses);
    expect(op.security).toEqual([{ bearer: [] }]);
  });

  it('documents list parameters and the request body', () => {
    const names = doc.paths['/tags'].get.parameters!.map((p) => p.name).sort();
    expect(names).toEqual(['hostId', 'limit', 'offset', 'q', 'sort', 'tagDesc', 'tagName']);
    expect(doc.paths['/tags'].post.requestBody).toBeDefined();
  });

  it('serves the HTML page at /docs', async () => {
    const res = await call(api, 'GET', '/docs');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
  });
});
