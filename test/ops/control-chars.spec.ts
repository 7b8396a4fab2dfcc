import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { call, sqlDuring, startApi, unique, type TestApi } from '../support/api.js';
import {
  RegistryTable,
  RpcClient,
  startController,
  statementsDuring,
  type TestController,
} from '../support/controller.js';
import { callers, token, writeIssuerKeyFile } from '../support/tokens.js';

// One mechanism (libs/platform/validators.ts) for every text field: NUL and the other control characters
// are 400 over HTTP and -32602 over JSON-RPC, never a database error.
let api: TestApi;
let controller: TestController;
let table: RegistryTable;
let admin: string;

beforeAll(async () => {
  [api, controller] = await Promise.all([startApi(), startController()]);
  table = new RegistryTable();
  admin = await callers.admin();
});
afterAll(async () => {
  await Promise.all([api?.close(), controller?.close(), table?.end()]);
});

describe('HTTP: control characters are 400 naming the field', () => {
  it.each<[string, string, Record<string, unknown>, string]>([
    ['a NUL in tagName', '/tags', { tagName: 'a\u0000b' }, 'tagName'],
    ['a NUL in tagDesc', '/tags', { tagName: unique('t'), tagDesc: 'x\u0000' }, 'tagDesc'],
    ['an escape in tagDesc', '/tags', { tagName: unique('t'), tagDesc: 'x\u001b[31m' }, 'tagDesc'],
    ['a line feed in tagName', '/tags', { tagName: 'a\nb' }, 'tagName'],
    // At the ends too: trimming removes spaces, never a control character (DESIGN 3).
    ['a trailing line feed in tagName', '/tags', { tagName: 'ab\n' }, 'tagName'],
    ['a leading tab in tagName', '/tags', { tagName: '\tab' }, 'tagName'],
    [
      'a trailing carriage return in productVersion',
      '/products',
      { productName: 'n', productVersion: '1\r' },
      'productVersion',
    ],
    ['a trailing vertical tab in schemaName', '/schemas', { schemaName: 'n\u000b', schemaBody: '{}' }, 'schemaName'],
    ['a NUL in hostId', '/tags', { tagName: unique('t'), hostId: 'h\u0000' }, 'hostId'],
    ['a NUL in schemaBody', '/schemas', { schemaName: 'n', schemaBody: '{\u0000}' }, 'schemaBody'],
    ['a DEL in productVersion', '/products', { productName: 'n', productVersion: '1\u007f' }, 'productVersion'],
  ])('%s', async (_, path, body, field) => {
    const { result, queries } = await sqlDuring(() => call(api, 'POST', path, { token: admin, body }));
    expect(result.statusCode).toBe(400);
    const errors = result.json<{ errors: { field: string }[] }>().errors;
    expect(errors.map((e) => e.field)).toContain(field);
    expect(queries).toBe(0);
  });

  it('names are trimmed of surrounding spaces', async () => {
    const tagName = unique('sp');
    const res = await call(api, 'POST', '/tags', { token: admin, body: { tagName: `  ${tagName}\u00a0 ` } });
    expect([res.statusCode, res.json<{ tagName: string }>().tagName]).toEqual([201, tagName]);
  });

  it('free text keeps tab, line feed and carriage return', async () => {
    const res = await call(api, 'POST', '/tags', {
      token: admin,
      body: { tagName: unique('t'), tagDesc: 'line one\r\n\tline two' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json<{ tagDesc: string }>().tagDesc).toBe('line one\r\n\tline two');
  });

  it('takes the C1 range (U+0080 to U+009F), which DESIGN 3 does not count among control characters', async () => {
    const tagName = unique('c1\u0085');
    const res = await call(api, 'POST', '/tags', { token: admin, body: { tagName, tagDesc: 'x\u0080y\u009f' } });
    expect(res.statusCode).toBe(201);
    expect(res.json<{ tagName: string; tagDesc: string }>()).toMatchObject({ tagName, tagDesc: 'x\u0080y\u009f' });
  });
});

describe('JSON-RPC: control characters are -32602 and nothing is stored', () => {
  it.each<[string, string, Record<string, unknown>, string]>([
    ['a NUL in address', 'service/register', { address: '10.0.0.1\u0000' }, 'address'],
    ['a NUL in a tag value', 'service/register', { tags: { zone: 'a\u0000' } }, 'tags'],
    ['a NUL in a lookup envTag', 'discovery/lookup', { envTag: 'dev\u0000' }, 'envTag'],
  ])('%s', async (_, method, extra, field) => {
    const serviceId = unique('cc');
    const client = await RpcClient.connect(controller.wsUrl, {
      token: await token({ sid: serviceId, host: controller.hostId }),
    });
    try {
      const response = await client.call(method, { serviceId, ...extra });
      expect(response.error).toMatchObject({ code: -32602, data: { status: 400 } });
      const errors = response.error?.data?.errors as { field: string }[];
      expect(errors.map((e) => e.field)).toContain(field);
      expect(await table.byService(serviceId)).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

/** A GET operation of an OpenAPI document: its path template and its query and path parameters. */
interface GetRoute {
  readonly path: string;
  readonly query: readonly string[];
  readonly pathParams: readonly string[];
}

interface OpenApiParameters {
  readonly paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
}

/** Every GET route of a process, from its own OpenAPI document, so a new route is covered without a test edit. */
function getRoutes(doc: OpenApiParameters): GetRoute[] {
  return Object.entries(doc.paths).flatMap(([path, operations]) => {
    const get = operations.get;
    if (get === undefined) return [];
    const parameters = get.parameters ?? [];
    return [
      {
        path,
        query: parameters.filter((p) => p.in === 'query').map((p) => p.name),
        pathParams: parameters.filter((p) => p.in === 'path').map((p) => p.name),
      },
    ];
  });
}

/** Refused everywhere: NUL, the other C0 controls but tab, line feed and carriage return, DEL. */
const ALWAYS_REFUSED = ['\u0000', '\u0001', '\u0008', '\u000b', '\u001b', '\u001f', '\u007f'];
/** Refused in names, ids and keywords; kept by the free-text filters. */
const LINE_CONTROLS = ['\t', '\n', '\r'];
/** The query parameters that are free text (a substring of a description). */
const FREE_TEXT = new Set(['q', 'tagDesc']);
/** Runtime reads: the binding guard compares these to the token first (DESIGN 3's order: 403 before 400). */
const BINDING = new Set(['host', 'serviceId', 'envTag']);
/** The config server's layer address, trimmed of surrounding whitespace as the binding trims (DESIGN 6.2). */
const ADDRESS = new Set(['host', 'serviceId', 'productId', 'productVersion', 'envTag']);
const RUNTIME = { host: 'h-cc', sid: 'svc-cc' };
const SOME_ID = 'AAAAAAAAAAAAAAAAAAAAAA';

const hex = (char: string): string => `%${char.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase()}`;
const label = (char: string): string => `U+${char.charCodeAt(0).toString(16).padStart(4, '0').toUpperCase()}`;

interface Probe {
  readonly name: string;
  readonly url: string;
  readonly field: string;
  readonly char: string;
  readonly refused: boolean;
  readonly binding: boolean;
}

/** One request per route, parameter and control character: the parameter carries it, the rest is valid. */
function probes(route: GetRoute): Probe[] {
  const runtime = route.path.startsWith('/config-server/') && !route.path.startsWith('/config-server/admin/');
  const base: Record<string, string> = runtime ? { host: RUNTIME.host, serviceId: RUNTIME.sid } : {};
  if (route.query.includes('kind')) base.kind = 'file';
  const fill = (path: string, name?: string, value?: string): string =>
    path.replace(/\{(\w+)\}/g, (_, param: string) => (param === name ? (value ?? '') : SOME_ID));
  const query = (name?: string, value?: string): string => {
    const parts = Object.entries(base).filter(([key]) => key !== name);
    const encoded = parts.map(([key, v]) => `${key}=${encodeURIComponent(v)}`);
    if (name !== undefined && value !== undefined) encoded.push(`${name}=${value}`);
    return encoded.length === 0 ? '' : `?${encoded.join('&')}`;
  };
  const result: Probe[] = [];
  const chars = [...ALWAYS_REFUSED, ...LINE_CONTROLS];
  for (const name of route.query) {
    for (const char of chars) {
      result.push({
        name: `${route.path} ?${name}= ${label(char)}`,
        url: fill(route.path) + query(name, `a${hex(char)}b`),
        field: name,
        char,
        refused: ALWAYS_REFUSED.includes(char) || !FREE_TEXT.has(name),
        binding: runtime && BINDING.has(name),
      });
    }
  }
  // At either end of a name, id or keyword too: refused, not trimmed away (DESIGN 3). The config server's
  // address is trimmed like the binding (DESIGN 6.2): test/binding/config-read.property.spec.ts covers it.
  const address = route.path.startsWith('/config-server/') ? ADDRESS : new Set<string>();
  for (const name of route.query.filter((n) => !FREE_TEXT.has(n) && !address.has(n))) {
    for (const char of LINE_CONTROLS) {
      for (const [where, value] of [
        ['first', `${hex(char)}ab`],
        ['last', `ab${hex(char)}`],
      ] as const) {
        result.push({
          name: `${route.path} ?${name}= ${label(char)} ${where}`,
          url: fill(route.path) + query(name, value),
          field: name,
          char,
          refused: true,
          binding: false,
        });
      }
    }
  }
  for (const name of route.pathParams) {
    for (const char of chars) {
      result.push({
        name: `${route.path} {${name}} ${label(char)}`,
        url: fill(route.path, name, `a${hex(char)}b`) + query(),
        field: name,
        char,
        refused: true,
        binding: false,
      });
    }
  }
  // A parameter no route declares is refused too: any query parameter (DESIGN 3), without its name, as no
  // error answer echoes the query.
  result.push({
    name: `${route.path} an undeclared parameter`,
    url: fill(route.path) + query('extra', '%1B%5B31m'),
    field: '(query)',
    char: '\u001b',
    refused: true,
    binding: false,
  });
  return result;
}

/** An answer that never ends (a stream let through) fails its probe instead of hanging the test. */
function within<T>(promise: Promise<T>, what: string, timeoutMs = 3000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no complete answer in ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

interface FieldErrors {
  readonly errors?: { field: string }[];
}

describe('control characters in every query and path parameter of every GET route (DESIGN 3)', () => {
  let issuerApi: TestApi;
  let apiRoutes: GetRoute[];
  let controllerRoutes: GetRoute[];
  let runtimeToken: string;

  beforeAll(async () => {
    issuerApi = await startApi({ TOKEN_ISSUER_KEY_FILE: writeIssuerKeyFile().file });
    apiRoutes = getRoutes((await call(issuerApi, 'GET', '/docs/openapi.json')).json<OpenApiParameters>());
    controllerRoutes = getRoutes(
      (await fetch(`${controller.httpUrl}/docs/openapi.json`).then((r) => r.json())) as OpenApiParameters,
    );
    runtimeToken = await token({ sub: 'rt', scope: 'portal.r', host: RUNTIME.host, sid: RUNTIME.sid });
  });
  afterAll(() => issuerApi?.close());

  it('the documents list the list routes and id routes this issue names', () => {
    const paths = apiRoutes.map((route) => route.path);
    for (const path of ['/tags', '/schemas', '/products', '/documents', '/registry/instances', '/oauth2/clients']) {
      expect(paths).toContain(path);
    }
    expect(paths).toContain('/oauth2/clients/{clientId}');
    expect(paths).toContain('/tags/{tagId}');
    expect(controllerRoutes.map((route) => route.path)).toContain('/instances');
  });

  it('api: 400 naming the parameter, before any SQL; free text keeps tab and line breaks', async () => {
    const failures: string[] = [];
    let checked = 0;
    for (const route of apiRoutes) {
      for (const probe of probes(route)) {
        const bearer = probe.url.startsWith('/config-server/') && !probe.url.startsWith('/config-server/admin/');
        const answered = await sqlDuring(() =>
          within(call(issuerApi, 'GET', probe.url, { token: bearer ? runtimeToken : admin }), probe.name),
        ).catch((error: Error) => error);
        checked += 1;
        if (answered instanceof Error) {
          failures.push(answered.message);
          continue;
        }
        const { result, queries } = answered;
        // The binding's refusal is text/plain (DESIGN 6.2); every other error names its fields.
        const problem = String(result.headers['content-type'] ?? '').startsWith('application/problem+json');
        const fields = (problem ? (result.json<FieldErrors>().errors ?? []) : []).map((e) => e.field);
        if (!probe.refused) {
          if (result.statusCode >= 400) failures.push(`${probe.name}: ${result.statusCode} (should be kept)`);
          continue;
        }
        // A binding parameter is compared to the token first: a mismatch there is 403, also before SQL.
        const statusOk = probe.binding ? [400, 403].includes(result.statusCode) : result.statusCode === 400;
        const named = probe.binding && result.statusCode === 403 ? true : fields.includes(probe.field);
        if (!statusOk || !named || queries !== 0) {
          failures.push(`${probe.name}: ${result.statusCode} ${JSON.stringify(fields)} after ${queries} statements`);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(checked).toBeGreaterThan(300);
  });

  it('controller: GET /instances the same, and no registry statement runs', async () => {
    const failures: string[] = [];
    for (const route of controllerRoutes) {
      for (const probe of probes(route)) {
        const { result, registry } = await statementsDuring(() =>
          fetch(`${controller.httpUrl}${probe.url}`, {
            headers: { authorization: `Bearer ${admin}` },
            signal: AbortSignal.timeout(3000),
          }).then(async (res) => ({
            status: res.status,
            body: (res.headers.get('content-type')?.startsWith('application/problem+json') === true
              ? await res.json()
              : await res.text().then(() => ({}))) as FieldErrors,
          })),
        );
        const fields = (result.body.errors ?? []).map((e) => e.field);
        const ok = probe.refused ? result.status === 400 && fields.includes(probe.field) : result.status < 400;
        if (!ok || registry.length > 0) failures.push(`${probe.name}: ${result.status} ${JSON.stringify(fields)}`);
      }
    }
    expect(failures).toEqual([]);
  });
});

describe('free text in a query filter finds what it names', () => {
  it('a tagDesc filter with a tab and a line break matches the description holding them', async () => {
    const tagDesc = `${unique('col')}\tone\r\ntwo`;
    const created = await call(api, 'POST', '/tags', { token: admin, body: { tagName: unique('ft'), tagDesc } });
    expect(created.statusCode).toBe(201);
    const res = await call(api, 'GET', `/tags?tagDesc=${encodeURIComponent(tagDesc)}`, { token: admin });
    expect(res.statusCode).toBe(200);
    expect(res.json<{ tags: { tagDesc: string }[] }>().tags.map((t) => t.tagDesc)).toEqual([tagDesc]);
  });
});
