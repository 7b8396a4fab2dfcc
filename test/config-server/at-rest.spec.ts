import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { startApi, unique, type TestApi } from '../support/api.js';
import { adminToken, b64, bearer, expectProblem, putFiles, putProperties, send, signed } from './support.js';

/**
 * DESIGN 17: every config value and file is sealed at rest, read back decrypted after the merge, and a value
 * that cannot be opened is a 500 problem, never the ciphertext nor an omission. DESIGN 14: a file content
 * is stored once however many versions hold it.
 */
let api: TestApi;
let db: DataSource;

beforeAll(async () => {
  api = await startApi();
  db = api.app.get(DataSource);
  // A database created before encryption existed keeps writing plaintext until keys:encrypt-existing.
  await db.query('update config_encryption set encrypted_writes = true');
});
afterAll(() => api.close());

const runtime = (host: string, sid: string, env?: string) =>
  signed({ sub: 'rt', scope: 'portal.r', host, sid, ...(env === undefined ? {} : { env }) });

async function readConfigs(host: string, sid: string, env?: string) {
  const query = { host, serviceId: sid, ...(env === undefined ? {} : { envTag: env }) };
  return send(api, 'GET', '/config-server/configs', { query, authorization: bearer(await runtime(host, sid, env)) });
}

/** Every row of every table in the schema, as text: bytea shows as hex. */
async function everyRow(): Promise<string> {
  const tables = await db.query<{ name: string }[]>(
    `select quote_ident(table_name) as name from information_schema.tables
      where table_schema = current_schema() and table_type = 'BASE TABLE'`,
  );
  const parts: string[] = [];
  for (const { name } of tables) {
    const rows = await db.query<{ row: string }[]>(`select t::text as row from ${name} t`);
    parts.push(...rows.map((r) => r.row));
  }
  return parts.join('\n');
}

/** The forms a planted secret could take in a row: text, hex of its bytes, base64, its SHA-256. */
function forms(secret: Buffer): string[] {
  return [
    secret.toString('utf8'),
    secret.toString('hex'),
    secret.toString('base64'),
    createHash('sha256').update(secret).digest('hex'),
  ].filter((form) => form.length >= 16);
}

describe('secrets at rest', () => {
  it('leaves no planted value, file or file digest in any table after writes, rollback and reads', async () => {
    const host = unique('rest');
    const secret = `pw-${randomBytes(12).toString('hex')}`;
    const pem = Buffer.from(`-----BEGIN KEY-----\n${randomBytes(48).toString('base64')}\n-----END KEY-----\n`);
    const query = { host, serviceId: 'svc' };
    await putProperties(api, query, { 'db.password': secret, 'db.pool': { size: 5, names: [secret] } });
    await putFiles(api, query, 'cert', { 'key.pem': pem });
    await putProperties(api, query, { 'db.password': 'rotated' });
    const admin = bearer(await adminToken());
    // Version 2 held the secret and the file; version 3 replaced the properties.
    const rolledBack = await api.app.inject({
      method: 'POST',
      url: `/config-server/admin/rollback?host=${host}&serviceId=svc&version=2`,
      headers: { authorization: admin, 'if-match': 'W/"3"' },
    });
    expect([rolledBack.statusCode, rolledBack.json<{ version: number }>().version]).toEqual([200, 4]);
    const version = await send(api, 'GET', '/config-server/admin/history/2', {
      query: { ...query, include: 'files' },
      authorization: admin,
    });
    expect(version.res.json()).toMatchObject({
      properties: { 'db.password': secret, 'db.pool': { size: 5, names: [secret] } },
      files: { cert: { 'key.pem': createHash('sha256').update(pem).digest('hex') }, file: {} },
      fileContents: { cert: { 'key.pem': b64(pem) }, file: {} },
    });
    // A sealed version stores no digest: history works it out when read.
    const listed = await send(api, 'GET', '/config-server/admin/history', { query, authorization: admin });
    const v2 = listed.res.json<{ versions: { version: number; change: { sha256: Record<string, string> } }[] }>();
    expect(v2.versions.find((v) => v.version === 2)?.change.sha256).toEqual({
      'cert/key.pem': createHash('sha256').update(pem).digest('hex'),
    });

    const read = await readConfigs(host, 'svc');
    expect(read.res.statusCode).toBe(200);
    expect(read.res.json()).toEqual({ 'db.password': secret, 'db.pool': { size: 5, names: [secret] } });
    const certs = await send(api, 'GET', '/config-server/certs', {
      query,
      authorization: bearer(await runtime(host, 'svc')),
    });
    expect(certs.res.json()).toEqual({ 'key.pem': b64(pem) });

    const rows = await everyRow();
    expect(rows).toContain(host);
    for (const form of [...forms(Buffer.from(secret)), ...forms(pem)]) expect(rows.includes(form)).toBe(false);
  });

  it('answers 500 "Config value cannot be decrypted" for a value copied to another layer or key, naming no value', async () => {
    const host = unique('copy');
    const secret = `s-${randomBytes(10).toString('hex')}`;
    await putProperties(api, { host, serviceId: 'a' }, { 'x.secret': secret, 'x.other': 'plain' });
    await putProperties(api, { host, serviceId: 'b' }, { 'x.kept': 'ok' });
    const [source] = await db.query<{ sealed: Buffer; data_key_id: string }[]>(
      `select p.sealed, l.data_key_id from config_property p join config_layer l using (layer_id)
        where l.host = $1 and l.service_id = 'a' and p.property_key = 'x.secret'`,
      [host],
    );
    expect(source?.sealed).toBeInstanceOf(Buffer);
    // To another layer, same key name, and under the same data key: only the AAD tells them apart.
    await db.query(
      `update config_property p set sealed = $2 from config_layer l
        where l.layer_id = p.layer_id and l.host = $1 and l.service_id = 'b'`,
      [host, source?.sealed],
    );
    await db.query(`update config_layer set data_key_id = $2 where host = $1 and service_id = 'b'`, [
      host,
      source?.data_key_id,
    ]);
    // To another key name of the same layer.
    await db.query(
      `update config_property p set sealed = $2 from config_layer l
        where l.layer_id = p.layer_id and l.host = $1 and l.service_id = 'a' and p.property_key = 'x.other'`,
      [host, source?.sealed],
    );
    for (const sid of ['a', 'b']) {
      const sent = await readConfigs(host, sid);
      const problem = expectProblem(sent, 500);
      expect(problem.detail).toBe('Config value cannot be decrypted');
      expect(sent.res.body).not.toContain(secret);
      expect(sent.res.body).not.toContain(source?.sealed.toString('base64').slice(0, 20));
    }
    const logged = api.logs.lines.filter((l) => l.msg === 'config value cannot be decrypted');
    expect(logged.map((l) => [(l.layer as { serviceId: string }).serviceId, l.key])).toEqual(
      expect.arrayContaining([
        ['a', 'x.other'],
        ['b', 'x.kept'],
      ]),
    );
    expect(api.logs.raw.join('\n')).not.toContain(secret);
  });

  it('answers 500 for a flipped tag byte of a property or a file, never the bytes', async () => {
    const host = unique('flip');
    await putProperties(api, { host, serviceId: 'svc' }, { 'x.y': 'value' });
    await putFiles(api, { host, serviceId: 'svc' }, 'file', { 'a.txt': 'content' });
    // Byte 13 is the tag's first (version 1, nonce 12).
    await db.query(
      `update config_property p set sealed = set_byte(p.sealed, 13, get_byte(p.sealed, 13) # 1)
         from config_layer l where l.layer_id = p.layer_id and l.host = $1`,
      [host],
    );
    await db.query(
      `update config_file_content c set sealed = set_byte(c.sealed, 13, get_byte(c.sealed, 13) # 1)
         from config_layer l where l.layer_id = c.layer_id and l.host = $1`,
      [host],
    );
    expect(expectProblem(await readConfigs(host, 'svc'), 500).detail).toBe('Config value cannot be decrypted');
    const files = await send(api, 'GET', '/config-server/files', {
      query: { host, serviceId: 'svc' },
      authorization: bearer(await runtime(host, 'svc')),
    });
    expect(expectProblem(files, 500).detail).toBe('Config value cannot be decrypted');
    expect(files.res.body).not.toContain(b64('content'));
  });

  it('stores a file content once: 20 property writes to a layer with two 700 KB files add less than one copy', async () => {
    const host = unique('grow');
    const query = { host, serviceId: 'svc' };
    // One kind each: the admin API takes at most 1 MiB per request.
    await putFiles(api, query, 'cert', { 'a.bin': randomBytes(700_000) });
    await putFiles(api, query, 'file', { 'b.bin': randomBytes(700_000) });
    const size = async () => {
      const [row] = await db.query<{ bytes: string }[]>(
        `select (select coalesce(sum(pg_column_size(v.*)), 0) from config_layer_version v where v.layer_id = l.layer_id)
              + (select coalesce(sum(pg_column_size(c.*)), 0) from config_file_content c where c.layer_id = l.layer_id)
              as bytes
           from config_layer l where l.host = $1`,
        [host],
      );
      return Number(row?.bytes);
    };
    const before = await size();
    for (let i = 0; i < 20; i++) await putProperties(api, query, { 'x.counter': `value-${i}-${'x'.repeat(20)}` });
    const grown = (await size()) - before;
    expect(grown).toBeGreaterThan(0);
    expect(grown).toBeLessThan(700_000);
    const [contents] = await db.query<{ n: number }[]>(
      `select count(*)::int as n from config_file_content c join config_layer l using (layer_id) where l.host = $1`,
      [host],
    );
    expect(contents?.n).toBe(2);
  });
});
