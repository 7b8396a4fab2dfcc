import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { call, startApi, unique, type TestApi } from '../support/api.js';
import { callers } from '../support/tokens.js';

let api: TestApi;
let db: DataSource;
let admin: string;

beforeAll(async () => {
  api = await startApi();
  db = api.app.get(DataSource);
  admin = await callers.admin();
});
afterAll(() => api.close());

/** Hosts whose stored counter differs from a count of their rows, read in one snapshot (one statement). */
async function drift(): Promise<{ host_key: string; stored: number; counted: number }[]> {
  return db.query(`
    select host_key, coalesce(stored, 0)::int as stored, coalesce(counted, 0)::int as counted
      from (select host_key, sum(tags) as stored from tag_count group by host_key) s
      full join (select coalesce(host_id, '') as host_key, count(*) as counted from tag group by 1) c using (host_key)
     where coalesce(stored, 0) <> coalesce(counted, 0)`);
}

async function create(hostId: string | null): Promise<string> {
  const res = await call(api, 'POST', '/tags', { token: admin, body: { tagName: unique('cnt'), hostId } });
  expect(res.statusCode).toBe(201);
  return res.json<{ tagId: string }>().tagId;
}

it('keeps every host counter equal to its rows through creates, deletes, host moves and concurrent writes', async () => {
  const [h1, h2] = [unique('hc'), unique('hc')];
  const ids = [await create(h1), await create(h1), await create(h2), await create(null)];
  expect(await drift()).toEqual([]);

  // A move between hosts, to global and back; an update that keeps the host moves nothing.
  for (const hostId of [h2, null, h1]) {
    const res = await call(api, 'PUT', `/tags/${ids[0]}`, {
      token: admin,
      body: { tagName: unique('moved'), hostId },
    });
    expect(res.statusCode).toBe(200);
    expect(await drift()).toEqual([]);
  }

  const deleted = await call(api, 'DELETE', `/tags/${ids[2]}`, { token: admin });
  expect(deleted.statusCode).toBe(204);
  expect(await drift()).toEqual([]);

  // Sixteen creates in flight on the api's pool, spread over hosts: the shards add up to the rows.
  await Promise.all(Array.from({ length: 16 }, (_, i) => create(i % 3 === 0 ? null : i % 2 === 0 ? h1 : h2)));
  expect(await drift()).toEqual([]);
  const [{ counted }] = await db.query<{ counted: number }[]>(
    'select count(*)::int as counted from tag where host_id = $1',
    [h2],
  );
  expect(counted).toBeGreaterThan(0);
});

it('answers an unfiltered list with the exact visible total, from the counters', async () => {
  const host = unique('hc');
  await create(host);
  await create(host);
  const reader = await callers.reader(host);
  // Other test files write global tags meanwhile: compare only when nothing changed around the request.
  for (let attempt = 0; attempt < 10; attempt += 1) {
    const visible = `select count(*)::int as n from tag where host_id is null or host_id = $1`;
    const [before] = await db.query<{ n: number }[]>(visible, [host]);
    const res = await call(api, 'GET', '/tags?limit=1', { token: reader });
    const [after] = await db.query<{ n: number }[]>(visible, [host]);
    expect(res.statusCode).toBe(200);
    if (before?.n !== after?.n) continue;
    expect(res.json<{ total: number }>().total).toBe(after?.n);
    return;
  }
  throw new Error('tags kept changing; no quiet moment to compare');
});

it('empties the counters when the table is truncated (checked in a transaction that is rolled back)', async () => {
  const runner = db.createQueryRunner();
  await runner.connect();
  try {
    await runner.startTransaction();
    await runner.query(`set local lock_timeout = '10s'`);
    await runner.query('truncate tag cascade');
    const [row] = (await runner.query('select count(*)::int as n from tag_count where tags <> 0')) as { n: number }[];
    expect(row?.n).toBe(0);
  } finally {
    await runner.rollbackTransaction();
    await runner.release();
  }
});
