import { describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { StatementNames, TagRepository } from '#database';
import { startApi, unique, type TestApi } from '../support/api.js';

const url = (): string => process.env.DATABASE_URL ?? '';
// CI's PgBouncer run (DESIGN 15): DATABASE_URL is a transaction pooler, declared so; no statement may be named.
const pooled = process.env.DATABASE_POOL_MODE === 'transaction';

/** The named statements of the session a one-connection api reads a tag in (read twice). */
async function namedTagReads(api: TestApi): Promise<number> {
  const tags = api.app.get(TagRepository);
  const missing = unique('no-such-tag');
  expect(await tags.findById(missing)).toBeNull();
  expect(await tags.findById(missing)).toBeNull();
  const prepared = await api.app
    .get(DataSource)
    .query<{ name: string; statement: string }[]>('select name, statement from pg_prepared_statements');
  return prepared.filter((p) => p.name.startsWith('bindery_') && /from tag t where t\.tag_id = \$1$/.test(p.statement))
    .length;
}

describe('hot reads are named statements on a direct connection, never behind a pooler', () => {
  // One connection: the catalog query runs in the session that read the tag.
  it(
    pooled ? 'behind the pooler, no session holds a named statement' : 'the read is prepared once per session',
    async () => {
      const api = await startApi({ DB_POOL_SIZE: '1' });
      try {
        expect(await namedTagReads(api)).toBe(pooled ? 0 : 1);
      } finally {
        await api.close();
      }
    },
  );

  it('DATABASE_POOL_MODE=transaction: nothing is named', async () => {
    const session = new URL(process.env.DATABASE_SESSION_URL || url());
    session.searchParams.set('application_name', 'bindery-session');
    const api = await startApi({
      DB_POOL_SIZE: '1',
      DATABASE_POOL_MODE: 'transaction',
      DATABASE_SESSION_URL: session.toString(),
    });
    try {
      expect(await namedTagReads(api)).toBe(0);
    } finally {
      await api.close();
    }
  });

  // Nothing is inferred from the URLs: two different URLs with no declared mode are still a session pool.
  (pooled ? it.skip : it)('a DATABASE_SESSION_URL of its own declares nothing: statements stay named', async () => {
    const session = new URL(url());
    session.searchParams.set('application_name', 'bindery-session');
    const api = await startApi({ DB_POOL_SIZE: '1', DATABASE_SESSION_URL: session.toString() });
    try {
      expect(await namedTagReads(api)).toBe(1);
    } finally {
      await api.close();
    }
  });
});

describe('StatementNames', () => {
  it('names each text once, the same name every time, and at most `max` texts', () => {
    const names = new StatementNames(3);
    const first = ['select 1', 'select 2', 'select 3'].map((text) => names.of(text));
    expect(new Set(first).size).toBe(3);
    expect(names.of('select 4')).toBeUndefined();
    expect(['select 1', 'select 2', 'select 3'].map((text) => names.of(text))).toEqual(first);
    expect(names.of('select 4')).toBeUndefined();
  });

  it('renews a name (0A000: the statement is prepared again under it) until `max` names were handed out', () => {
    const names = new StatementNames(3);
    const first = names.of('select 1');
    const renewed = names.renew('select 1');
    expect(renewed).toBeDefined();
    expect(renewed).not.toBe(first);
    expect(names.of('select 1')).toBe(renewed);
    names.of('select 2');
    expect(names.renew('select 1')).toBeUndefined();
    expect(names.of('select 1')).toBeUndefined();
  });
});
