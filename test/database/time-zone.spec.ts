import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { call, startApi, unique, type TestApi } from '../support/api.js';
import { scratchDatabase, type ScratchDatabase } from '../support/schema-change.js';
import { callers, writeIssuerKeyFile } from '../support/tokens.js';

/**
 * DESIGN 15: every session runs with TimeZone=UTC, so time values read the same whatever the server's
 * default. Here the database's default zone is Pacific/Chatham (+12:45/+13:45): every time an answer
 * carries is UTC (`Z`), now, and reads back unchanged.
 */
const ZONE = 'Pacific/Chatham';
const transactionMode = process.env.DATABASE_POOL_MODE === 'transaction';
let scratch: ScratchDatabase;
let api: TestApi;
let admin: string;

beforeAll(async () => {
  scratch = await scratchDatabase('tz');
  const client = new pg.Client({ connectionString: scratch.sessionUrl });
  await client.connect();
  try {
    await client.query(`alter database ${new URL(scratch.sessionUrl).pathname.slice(1)} set timezone to '${ZONE}'`);
  } finally {
    await client.end();
  }
  api = await startApi({
    DATABASE_URL: scratch.url,
    DATABASE_SESSION_URL: scratch.sessionUrl,
    DATABASE_POOL_MODE: process.env.DATABASE_POOL_MODE ?? '',
    TOKEN_ISSUER_KEY_FILE: writeIssuerKeyFile().file,
  });
  admin = await callers.admin();
}, 60_000);
afterAll(async () => {
  await api?.close();
  await scratch?.drop();
});

/** `value` is an ISO time in UTC within the test's window (the server's clock is this machine's). */
function expectNow(value: unknown, since: number): void {
  expect(value).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const at = Date.parse(value as string);
  expect(at).toBeGreaterThanOrEqual(since - 1000);
  expect(at).toBeLessThanOrEqual(Date.now() + 1000);
}

describe(`a server whose default time zone is ${ZONE}`, () => {
  it('is not UTC by default, and a pooled session of the api is UTC', async () => {
    const direct = new pg.Client({ connectionString: scratch.sessionUrl });
    await direct.connect();
    try {
      expect((await direct.query<{ TimeZone: string }>('show timezone')).rows[0]?.TimeZone).toBe(ZONE);
    } finally {
      await direct.end();
    }
    // Behind a transaction pooler the zone is set per transaction, never on the pooled session.
    const zone = await api.app.get(DataSource).transaction(async (manager) => {
      if (transactionMode) await manager.query(`select set_config('TimeZone', 'UTC', true)`);
      return manager.query<{ TimeZone: string }[]>('show timezone');
    });
    expect(zone[0]?.TimeZone).toBe('UTC');
  });

  it('tags, entities, config history, clients and events carry UTC times that read back unchanged', async () => {
    const since = Date.now();
    const tag = await call(api, 'POST', '/tags', { token: admin, body: { tagName: unique('tz') } });
    expect(tag.statusCode).toBe(201);
    const { tagId, updateTs } = tag.json<{ tagId: string; updateTs: string }>();
    expectNow(updateTs, since);
    expect((await call(api, 'GET', `/tags/${tagId}`, { token: admin })).json()).toMatchObject({ updateTs });

    const schemaId = unique('tz').replace(/-/g, '');
    const schema = await call(api, 'POST', '/schemas', { token: admin, body: { schemaId, schemaName: 'tz' } });
    expect(schema.statusCode).toBe(201);
    const entityTs = schema.json<{ updateTs: string }>().updateTs;
    expectNow(entityTs, since);
    expect((await call(api, 'GET', `/schemas/${schemaId}`, { token: admin })).json()).toMatchObject({
      updateTs: entityTs,
    });

    const q = `host=${unique('tz')}&serviceId=svc`;
    const put = await call(api, 'PUT', `/config-server/admin/properties?${q}`, {
      token: admin,
      body: { properties: { 'a.b': 'c' } },
    });
    expect(put.statusCode).toBe(200);
    const history = await call(api, 'GET', `/config-server/admin/history?${q}`, { token: admin });
    const [version] = history.json<{ versions: { version: number; at: string }[] }>().versions;
    expectNow(version?.at, since);
    const one = await call(api, 'GET', `/config-server/admin/history/${version?.version}?${q}`, { token: admin });
    expect(one.json()).toMatchObject({ at: version?.at });

    const client = await call(api, 'POST', '/oauth2/clients', {
      token: admin,
      body: { envs: [], host: unique('tz'), sid: 'svc', scopes: ['portal.r'] },
    });
    expect(client.statusCode).toBe(201);
    const created = client.json<{ clientId: string; createdTs: string }>();
    expectNow(created.createdTs, since);
    const read = await call(api, 'GET', `/oauth2/clients/${created.clientId}`, { token: admin });
    expect(read.json()).toMatchObject({ createdTs: created.createdTs });

    const events = await call(api, 'GET', '/events?limit=1000', { token: admin });
    const list = events.json<{ events: { at: string }[] }>().events;
    expect(list.length).toBeGreaterThanOrEqual(3);
    for (const event of list) expectNow(event.at, since);
  });
});
