import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { type DataSource } from 'typeorm';
import { unique, type TestApi } from '../support/api.js';
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

/** DESIGN 4.2 cursor paging on GET /registry/instances (the same list as the controller's /instances). */
let api: TestApi;
let db: DataSource;
let get: Getter;

beforeAll(async () => {
  ({ api, db, get } = await listsApi());
});
afterAll(() => api.close());

/** An instance's identity: service, then environment, address and port, each of the last three maybe absent. */
interface Identity {
  readonly serviceId: string;
  readonly envTag: string | null;
  readonly address: string | null;
  readonly port: number | null;
}

async function insert(host: string, identities: readonly Identity[]): Promise<void> {
  await db.query(
    `insert into runtime_instance (runtime_instance_id, host_id, service_id, env_tag, address, port, status, controller_id)
     select i, $1, s, e, a, p, 'connected', $7
       from unnest($2::varchar[], $3::varchar[], $4::varchar[], $5::varchar[], $6::int[]) as u(i, s, e, a, p)`,
    [
      host,
      identities.map(() => randomUUID().replaceAll('-', '').slice(0, 22)),
      identities.map((x) => x.serviceId),
      identities.map((x) => x.envTag),
      identities.map((x) => x.address),
      identities.map((x) => x.port),
      randomUUID(),
    ],
  );
}

const SERVICES = ['pets', 'Pets', 'orders'];
const ENVS = [null, 'prod', 'Prod'];
const ADDRESSES = [null, '10.0.0.1', '10.0.0.10'];
const PORTS = [null, 80, 8080];

const ids = (items: readonly unknown[]): string[] =>
  items.map((i) => (i as { runtimeInstanceId: string }).runtimeInstanceId);

describe('GET /registry/instances: following next', () => {
  const host = unique('ih');
  const list = `/registry/instances?hostId=${host}`;
  beforeAll(() =>
    insert(
      host,
      SERVICES.flatMap((serviceId, i) =>
        ENVS.flatMap((envTag, j) =>
          PORTS.map((port, k) => ({ serviceId, envTag, address: ADDRESSES[(i + j + k) % 3]!, port })),
        ),
      ),
    ),
  );

  it('visits every instance once, in the order of one offset page', async () => {
    const all = ids(await onePage(get, list, 'instances'));
    expect(all).toHaveLength(27);
    for (const limit of [1, 5]) {
      const { items, pages } = await followCursors(get, list, 'instances', limit);
      expect(ids(items)).toEqual(all);
      expect(pages[0]?.total).toBe(27);
      expect(pages.slice(1).every((p) => p.total === undefined)).toBe(true);
    }
  });

  it('refuses offset with cursor, a malformed cursor, and one of another filter', async () => {
    const good = (await pageAt(get, `${list}&limit=4`)).next!;
    expect((await get(`${list}&cursor=${good}&total=true`)).json<{ total: number }>().total).toBe(27);
    expectCursorRefused(await get(`${list}&offset=0&cursor=${good}`), good);
    const inside = insideOf(good);
    const bad = cursorOf({ ...inside, k: inside.k.map((v, i) => (i === 4 ? 'eighty' : v)) });
    expectCursorRefused(await get(`${list}&cursor=${bad}`), bad);
    expectCursorRefused(await get(`${list}&status=connected&cursor=${good}`), good);
    expectCursorRefused(await get(`/tags?cursor=${good}`), good);
  });

  it('exactly once for any identities and limit (property)', async () => {
    const identity = fc.record({
      serviceId: fc.constantFrom(...SERVICES),
      envTag: fc.constantFrom(...ENVS),
      address: fc.constantFrom(...ADDRESSES),
      port: fc.constantFrom(...PORTS),
    });
    await assertProperty(
      'instance cursor paging',
      fc.asyncProperty(
        // The identity is unique (NULLs not distinct), as registration keeps it.
        fc.uniqueArray(identity, { maxLength: 20, selector: (x) => JSON.stringify(x) }),
        fc.integer({ min: 1, max: 5 }),
        async (drawn, limit) => {
          const h = unique('ip');
          await insert(h, drawn);
          const url = `/registry/instances?hostId=${h}`;
          const all = ids(await onePage(get, url, 'instances'));
          expect(all).toHaveLength(drawn.length);
          expect(ids((await followCursors(get, url, 'instances', limit)).items)).toEqual(all);
        },
      ),
      25,
    );
  }, 120_000);
});
