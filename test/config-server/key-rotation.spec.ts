import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { startApi, type TestApi } from '../support/api.js';
import { requireBuild, run } from '../support/processes.js';
import { scratchDatabase, type ScratchDatabase } from '../support/schema-change.js';
import { callers } from '../support/tokens.js';
import { adminToken, b64, bearer, putFiles, putProperties, send, signed } from './support.js';

/** DESIGN 17: rotation re-wraps data keys only; start-up refuses a ring without a needed kid; encrypt-existing. */
const OLD = `old-1: ${randomBytes(32).toString('base64')}`;
const NEW = `new-2: ${randomBytes(32).toString('base64')}`;
const NEWER = `newer-3: ${randomBytes(32).toString('base64')}`;

/** `npm run keys:<command>` as operators run it (the built script), on `database` with the ring `ring`. */
async function keysCommand(database: ScratchDatabase, command: string, ring: string): Promise<string> {
  requireBuild();
  const script = run('scripts/keys.js', [command], { DATABASE_URL: database.sessionUrl, CONFIG_KEYRING_FILE: ring });
  const code = await script.exit();
  expect([code, script.output()]).toEqual([0, expect.any(String)]);
  return script.output();
}

/** Every row of every table of `database`, as text (bytea as hex). */
async function everyRow(database: ScratchDatabase): Promise<string> {
  const tables = await sql<{ name: string }>(
    database,
    `select quote_ident(table_name) as name from information_schema.tables
      where table_schema = current_schema() and table_type = 'BASE TABLE'`,
  );
  const parts: string[] = [];
  for (const { name } of tables) {
    parts.push(...(await sql<{ row: string }>(database, `select t::text as row from ${name} t`)).map((r) => r.row));
  }
  return parts.join('\n');
}

/** The forms a planted secret could take in a row: its text, hex, base64 and SHA-256. */
const forms = (secret: string): string[] => {
  const bytes = Buffer.from(secret, 'utf8');
  return [secret, bytes.toString('hex'), bytes.toString('base64'), createHash('sha256').update(bytes).digest('hex')];
};

function ringFile(...lines: string[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'bindery-ring-')), 'config-keyring');
  writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o600 });
  return file;
}

async function apiOn(database: ScratchDatabase, env: Record<string, string>): Promise<TestApi> {
  return startApi({ DATABASE_URL: database.url, DATABASE_SESSION_URL: database.sessionUrl, ...env });
}

async function sql<T>(database: ScratchDatabase, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: database.sessionUrl });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

const query = { host: 'h1', serviceId: 'svc' };

async function snapshot(api: TestApi) {
  const runtime = bearer(await signed({ sub: 'rt', scope: 'portal.r', host: 'h1', sid: 'svc' }));
  const admin = bearer(await adminToken());
  const configs = await send(api, 'GET', '/config-server/configs', { query, authorization: runtime });
  const files = await send(api, 'GET', '/config-server/files', { query, authorization: runtime });
  const history = await send(api, 'GET', '/config-server/admin/history', { query, authorization: admin });
  const properties = await send(api, 'GET', '/config-server/admin/properties', { query, authorization: admin });
  expect([configs.res.statusCode, files.res.statusCode, history.res.statusCode]).toEqual([200, 200, 200]);
  return {
    configs: configs.res.json(),
    files: files.res.json(),
    history: history.res.json(),
    etag: properties.res.headers.etag,
  };
}

async function keys(api: TestApi) {
  const sent = await send(api, 'GET', '/config-server/admin/keys', { authorization: bearer(await adminToken()) });
  expect(sent.res.statusCode).toBe(200);
  return sent.res.json<{ keys: { kid: string; dataKeys: number; active: boolean; inRing: boolean }[] }>().keys;
}

describe('key rotation', () => {
  const SECRETS = [0, 1, 2].map((i) => `planted-${i}-${randomBytes(12).toString('hex')}`);
  let database: ScratchDatabase;
  beforeAll(async () => {
    database = await scratchDatabase('rotation');
  });
  afterAll(() => database.drop());

  it('re-wraps every data key under the new kid without a new version, ETag change or event', async () => {
    const first = await apiOn(database, { CONFIG_KEYRING_FILE: ringFile(OLD) });
    let before;
    try {
      await putProperties(first, query, { 'db.password': SECRETS[0], 'db.pool': 5 });
      await putFiles(first, query, 'file', { 'a.txt': SECRETS[1] });
      await putProperties(first, query, { 'db.password': SECRETS[2] });
      before = await snapshot(first);
      expect(before.configs).toEqual({ 'db.password': SECRETS[2] });
      // Three versions' keys and one file content's.
      expect(await keys(first)).toEqual([{ kid: 'old-1', dataKeys: 4, active: true, inRing: true }]);
      // A host-bound admin may not see or rotate the deployment's keys, and costs no SQL.
      const hostAdmin = bearer(await callers.admin({ host: 'h1' }));
      for (const method of ['GET', 'POST'] as const) {
        const url = method === 'GET' ? '/config-server/admin/keys' : '/config-server/admin/keys/rewrap';
        const sent = await send(first, method, url, { authorization: hostAdmin });
        expect([sent.res.statusCode, sent.queries]).toEqual([403, 0]);
      }
    } finally {
      await first.close();
    }
    const events = async () =>
      (await sql<{ n: number }>(database, `select count(*)::int as n from change_event`))[0]?.n;
    const eventsBefore = await events();

    const both = await apiOn(database, { CONFIG_KEYRING_FILE: ringFile(NEW, OLD) });
    try {
      expect(await keys(both)).toEqual([
        { kid: 'new-2', dataKeys: 0, active: true, inRing: true },
        { kid: 'old-1', dataKeys: 4, active: false, inRing: true },
      ]);
      const admin = bearer(await adminToken());
      const rewrap = await both.app.inject({
        method: 'POST',
        url: '/config-server/admin/keys/rewrap',
        headers: { authorization: admin },
      });
      expect([rewrap.statusCode, rewrap.json()]).toEqual([200, { kid: 'new-2', rewrapped: 4 }]);
      expect((await keys(both)).map((k) => [k.kid, k.dataKeys])).toEqual([
        ['new-2', 4],
        ['old-1', 0],
      ]);
      expect(await snapshot(both)).toEqual(before);
      // Again: nothing left to do.
      const again = await both.app.inject({
        method: 'POST',
        url: '/config-server/admin/keys/rewrap',
        headers: { authorization: admin },
      });
      expect(again.json()).toEqual({ kid: 'new-2', rewrapped: 0 });
    } finally {
      await both.close();
    }
    expect(await events()).toBe(eventsBefore);

    // The operator's command, twice: a second run finds nothing left under an older kid.
    const newest = ringFile(NEWER, NEW);
    expect(await keysCommand(database, 'rewrap', newest)).toContain(
      'keys:rewrap: 4 data keys re-wrapped; every data key is under kid "newer-3"',
    );
    expect(await keysCommand(database, 'rewrap', newest)).toContain('keys:rewrap: 0 data keys re-wrapped');
    expect(await events()).toBe(eventsBefore);
    // After rotation, as after writes: no table holds a planted value, file or digest in any form.
    const rows = await everyRow(database);
    expect(SECRETS.flatMap(forms).filter((form) => rows.includes(form))).toEqual([]);

    // An older kid alone can open nothing now, and says so at start; the newest alone serves everything.
    await expect(apiOn(database, { CONFIG_KEYRING_FILE: ringFile(NEW) })).rejects.toThrow(
      /4 stored data keys are wrapped under kid "newer-3" and the key ring lacks it/,
    );
    const fresh = await apiOn(database, { CONFIG_KEYRING_FILE: ringFile(NEWER) });
    try {
      expect(await snapshot(fresh)).toEqual(before);
    } finally {
      await fresh.close();
    }
  });
});

describe('keys:encrypt-existing', () => {
  let database: ScratchDatabase;
  beforeAll(async () => {
    database = await scratchDatabase('encrypt');
  });
  afterAll(() => database.drop());

  it('seals the plaintext rows and versions of an upgraded deployment, in place, once', async () => {
    const ring = ringFile(OLD);
    const secret = `pw-${randomBytes(10).toString('hex')}`;
    const first = await apiOn(database, { CONFIG_KEYRING_FILE: ring });
    let before;
    try {
      // A deployment upgraded from the release before: it has values, so it keeps writing plaintext.
      await sql(database, 'update config_encryption set encrypted_writes = false');
      await putProperties(first, query, { 'db.password': secret });
      // A file named `__proto__` too: the command once assigned it as a key, which set the prototype instead.
      await putFiles(first, query, 'cert', { 'k.pem': `key ${secret}`, ['__proto__']: 'proto' });
      await putProperties(first, query, { 'db.password': secret, 'db.pool': 3 });
      const ready = await first.app.inject({ method: 'GET', url: '/health/ready' });
      expect(ready.json()).toMatchObject({ config: { encryptedWrites: false, plaintextRows: 7 } });
      before = await snapshot(first);
    } finally {
      await first.close();
    }
    const [plain] = await sql<{ n: number }>(
      database,
      `select count(*)::int as n from config_property where property_value is not null`,
    );
    expect(plain?.n).toBe(2);
    // A routine ANALYZE while the deployment had no data key yet: the command must leave statistics that count them.
    await sql(database, 'analyze config_data_key');

    // The operator's command, twice: idempotent.
    expect(await keysCommand(database, 'encrypt-existing', ring)).toContain(
      'keys:encrypt-existing: encrypted writes on; sealed 1 layer and 3 versions; 0 plaintext rows left',
    );
    expect(await keysCommand(database, 'encrypt-existing', ring)).toContain('sealed 0 layers and 0 versions');
    const [keys] = await sql<{ counted: number; stored: number }>(
      database,
      `select reltuples::int as counted, (select count(*)::int from config_data_key) as stored
         from pg_class where relname = 'config_data_key'`,
    );
    expect(keys?.stored).toBeGreaterThan(1);
    expect(keys?.counted).toBe(keys?.stored);

    const rows = await sql<{ row: string }>(
      database,
      `select t::text as row from config_property t union all select t::text from config_file t
       union all select t::text from config_layer_version t union all select t::text from config_file_content t`,
    );
    const text = rows.map((r) => r.row).join('\n');
    expect([text.includes(secret), text.includes(b64(`key ${secret}`))]).toEqual([false, false]);

    const second = await apiOn(database, { CONFIG_KEYRING_FILE: ring });
    try {
      const ready = await second.app.inject({ method: 'GET', url: '/health/ready' });
      expect(ready.json()).toMatchObject({ config: { encryptedWrites: true, plaintextRows: 0 } });
      expect(await snapshot(second)).toEqual(before);
      // Version 2 (the file's) reads back whole, its digest worked out again.
      const version = await send(second, 'GET', '/config-server/admin/history/2', {
        query: { ...query, include: 'files' },
        authorization: bearer(await adminToken()),
      });
      expect(version.res.json()).toMatchObject({
        properties: { 'db.password': secret },
        fileContents: { cert: { 'k.pem': b64(`key ${secret}`) } },
      });
    } finally {
      await second.close();
    }
  });
});
