import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
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
import { token, writeIssuerKeyFile } from '../support/tokens.js';

/** DESIGN 4.2 cursor paging on GET /oauth2/clients, as a host-bound admin sees them (its host's clients only). */
let api: TestApi;
let db: DataSource;
const host = unique('ch');
let get: Getter;

async function insert(clientIds: readonly string[]): Promise<void> {
  await db.query(
    `insert into oauth_client (client_id, host, sid, scopes, secret_hash)
     select c, $2, 'svc', '{portal.r}', 'not-a-hash' from unnest($1::varchar[]) as u(c)`,
    [clientIds, host],
  );
}

beforeAll(async () => {
  const admin = await token({ sub: 'clients-admin', scope: 'portal.admin', host });
  ({ api, db, get } = await listsApi({ env: { TOKEN_ISSUER_KEY_FILE: writeIssuerKeyFile().file }, token: admin }));
  const s = host.slice(-6);
  await insert(
    ['Alpha', 'alpha', 'beta', 'B', '_x', '-y', 'a-b', 'a_b', 'z', 'Zz', '0', '10', '9'].map((id) => `${s}${id}`),
  );
});
afterAll(() => api.close());

const ids = (items: readonly unknown[]): string[] => items.map((c) => (c as { clientId: string }).clientId);

describe('GET /oauth2/clients: following next', () => {
  it('visits every client once, in client id order (the database collation decides)', async () => {
    const all = ids(await onePage(get, '/oauth2/clients', 'clients'));
    expect(all).toHaveLength(13);
    for (const limit of [1, 3, 5]) {
      const { items, pages } = await followCursors(get, '/oauth2/clients', 'clients', limit);
      expect(ids(items)).toEqual(all);
      expect(pages[0]?.total).toBe(13);
      expect(pages.slice(1).every((p) => p.total === undefined)).toBe(true);
    }
  });

  it('clients created after the cursor appear, before it do not', async () => {
    const before = ids(await onePage(get, '/oauth2/clients', 'clients'));
    const s = host.slice(-6);
    const { items } = await followCursors(get, '/oauth2/clients', 'clients', 4, {
      between: async (page) => {
        if (page === 1) await insert([`${s}0new`, `${s}zzz`]);
      },
    });
    const now = ids(await onePage(get, '/oauth2/clients', 'clients'));
    const cursorAt = now.indexOf(before[3]);
    expect(ids(items)).toEqual([
      ...now.slice(0, cursorAt + 1).filter((id) => before.includes(id)),
      ...now.slice(cursorAt + 1),
    ]);
    expect(ids(items)).toContain(`${s}zzz`);
  });

  it('refuses offset with cursor, a malformed cursor, and one of another owner or list', async () => {
    const good = (await pageAt(get, '/oauth2/clients?limit=2')).next!;
    expect((await get(`/oauth2/clients?cursor=${good}&total=true`)).json<{ total: number }>().total).toBeGreaterThan(2);
    expectCursorRefused(await get(`/oauth2/clients?offset=0&cursor=${good}`), good);
    const bad = cursorOf({ ...insideOf(good), k: [null] });
    expectCursorRefused(await get(`/oauth2/clients?cursor=${bad}`), bad);
    const other = await token({ sub: 'other-admin', scope: 'portal.admin', host: unique('ch') });
    expectCursorRefused(await call(api, 'GET', `/oauth2/clients?cursor=${good}`, { token: other }), good);
    expectCursorRefused(await get(`/config-server/admin/layers?host=${host}&cursor=${good}`), good);
  });
});
