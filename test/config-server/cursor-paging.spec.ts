import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { type DataSource } from 'typeorm';
import { call, unique, type TestApi } from '../support/api.js';
import {
  cursorOf,
  expectCursorRefused,
  followCursors,
  insideOf,
  listsApi,
  onePage,
  pageAt,
  type Getter,
} from '../support/paging.js';
import { assertProperty } from '../support/property.js';
import { token } from '../support/tokens.js';

/** DESIGN 4.2 cursor paging on GET /config-server/admin/layers and /config-server/admin/history. */
let api: TestApi;
let db: DataSource;
let admin: string;
let get: Getter;

beforeAll(async () => {
  ({ api, db, get, token: admin } = await listsApi());
});
afterAll(() => api.close());

/** A layer's address: a service or a product version, with or without an environment. */
interface Address {
  readonly serviceId: string | null;
  readonly product: string | null;
  readonly envTag: string | null;
}

async function insertLayers(host: string, addresses: readonly Address[]): Promise<void> {
  await db.query(
    `insert into config_layer (host, service_id, product_id, product_version, env_tag)
     select $1, s, p, case when p is null then null else '1.0' end, e
       from unnest($2::varchar[], $3::varchar[], $4::varchar[]) as u(s, p, e)`,
    [host, addresses.map((a) => a.serviceId), addresses.map((a) => a.product), addresses.map((a) => a.envTag)],
  );
}

const NAMES = ['svc', 'Svc', 'api', 'Zeta', 'a-b', 'a_b'];
const ENVS = [null, 'prod', 'dev', 'Prod'];

/** Service and product layers, each with every environment (NULL first and last in the order matter here). */
const addressesOf = (names: readonly string[]): Address[] =>
  names.flatMap((name, i) =>
    ENVS.map((envTag) =>
      i % 2 === 0 ? { serviceId: name, product: null, envTag } : { serviceId: null, product: name, envTag },
    ),
  );

const key = (layer: unknown): string => JSON.stringify(layer);

describe('GET /config-server/admin/layers: following next', () => {
  const host = unique('lh');
  const list = `/config-server/admin/layers?host=${host}`;
  beforeAll(() => insertLayers(host, addressesOf(NAMES)));

  it('visits every layer once, in the order of one offset page', async () => {
    const all = await onePage(get, list, 'layers');
    expect(all).toHaveLength(NAMES.length * ENVS.length);
    for (const limit of [1, 4, 7]) {
      const { items, pages } = await followCursors(get, list, 'layers', limit);
      expect(items.map(key)).toEqual(all.map(key));
      expect(pages[0]?.total).toBe(all.length);
      expect(pages.slice(1).every((p) => p.total === undefined)).toBe(true);
    }
  });

  it('layers created after the cursor appear, before it do not', async () => {
    const fresh = unique('lc');
    await insertLayers(fresh, addressesOf(['m1', 'm2', 'm3']));
    const { items } = await followCursors(get, `/config-server/admin/layers?host=${fresh}`, 'layers', 4, {
      between: async (page) => {
        if (page === 1) await insertLayers(fresh, addressesOf(['a0', 'z9']));
      },
    });
    const now = await onePage(get, `/config-server/admin/layers?host=${fresh}`, 'layers');
    const early = (l: unknown): boolean => (l as { serviceId: string | null }).serviceId === 'a0';
    expect(now.filter(early)).toHaveLength(ENVS.length);
    expect(items.map(key)).toEqual(now.filter((l) => !early(l)).map(key));
  });

  it('refuses offset with cursor, a malformed cursor, and one of another host or list', async () => {
    const good = (await pageAt(get, `${list}&limit=3`)).next!;
    expect((await get(`${list}&limit=5&total=true&cursor=${good}`)).json<{ total: number }>().total).toBe(24);
    expectCursorRefused(await get(`${list}&offset=3&cursor=${good}`), good);
    const inside = insideOf(good);
    for (const bad of [cursorOf({ ...inside, k: [...inside.k.slice(0, 5), '12.5'] }), cursorOf({ ...inside, k: [] })]) {
      expectCursorRefused(await get(`${list}&cursor=${bad}`), bad);
    }
    expectCursorRefused(await get(`/config-server/admin/layers?host=${unique('x')}&cursor=${good}`), good);
    expectCursorRefused(await get(`/config-server/admin/layers?cursor=${good}`), good);
  });

  it('exactly once for any set of addresses and limit (property)', async () => {
    const address = fc.record({
      name: fc.constantFrom(...NAMES, 'b', 'B'),
      product: fc.boolean(),
      envTag: fc.constantFrom(...ENVS),
    });
    await assertProperty(
      'layer cursor paging',
      fc.asyncProperty(
        fc.uniqueArray(address, { maxLength: 20, selector: (a) => `${a.name}|${a.product}|${a.envTag}` }),
        fc.integer({ min: 1, max: 5 }),
        async (drawn, limit) => {
          const h = unique('lp');
          await insertLayers(
            h,
            drawn.map((a) => ({
              serviceId: a.product ? null : a.name,
              product: a.product ? a.name : null,
              envTag: a.envTag,
            })),
          );
          const url = `/config-server/admin/layers?host=${h}`;
          const all = await onePage(get, url, 'layers');
          expect(all).toHaveLength(drawn.length);
          expect((await followCursors(get, url, 'layers', limit)).items.map(key)).toEqual(all.map(key));
        },
      ),
      25,
    );
  }, 120_000);
});

describe('GET /config-server/admin/history: following next', () => {
  const host = unique('hh');
  const layer = `host=${host}&serviceId=svc&envTag=prod`;
  const history = `/config-server/admin/history?${layer}`;
  const put = (n: number) =>
    call(api, 'PUT', `/config-server/admin/properties?${layer}`, { token: admin, body: { properties: { 'a.n': n } } });
  const versions = (items: readonly unknown[]): number[] => items.map((v) => (v as { version: number }).version);

  beforeAll(async () => {
    for (let n = 1; n <= 11; n += 1) expect((await put(n)).statusCode).toBe(200);
  });

  it('visits every version once, newest first; one written meanwhile is newer than the cursor', async () => {
    const all = versions(await onePage(get, history, 'versions'));
    expect(all).toEqual([11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
    const { items, pages } = await followCursors(get, history, 'versions', 3, {
      between: async (page) => {
        // Newest first: a new version sorts before the cursor, so it neither appears nor shifts the pages.
        if (page === 1) expect((await put(100 + page)).statusCode).toBe(200);
      },
    });
    expect(versions(items)).toEqual(all);
    expect(pages[0]?.total).toBe(11);
    expect(pages.slice(1).every((p) => p.total === undefined)).toBe(true);
  });

  it('refuses a cursor of another layer or list, and offset with cursor', async () => {
    const good = (await pageAt(get, `${history}&limit=2`)).next!;
    expectCursorRefused(await get(`${history}&offset=1&cursor=${good}`), good);
    expectCursorRefused(await get(`/config-server/admin/history?host=${host}&serviceId=other&cursor=${good}`), good);
    expectCursorRefused(await get(`/config-server/admin/layers?host=${host}&cursor=${good}`), good);
    const bad = cursorOf({ ...insideOf(good), k: [2 ** 31] });
    expectCursorRefused(await get(`${history}&cursor=${bad}`), bad);
    // A host-bound admin of another host is refused before the cursor is read.
    const other = await token({ sub: 'a2', scope: 'portal.admin', host: unique('h2') });
    expect((await call(api, 'GET', `${history}&cursor=${good}`, { token: other })).statusCode).toBe(403);
  });

  it('an unknown layer has no versions and no next', async () => {
    const none = `/config-server/admin/history?host=${unique('hn')}&serviceId=svc`;
    expect(await pageAt(get, none)).toEqual({ total: 0, versions: [] });
  });
});
