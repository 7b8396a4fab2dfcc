import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { ConfigHistoryRepository } from '#database';
import { startApi, unique, type TestApi } from '../support/api.js';
import { adminToken, bearer, putFiles, putProperties, send, type Query } from './support.js';

/**
 * DESIGN 14: at most CONFIG_HISTORY_MAX_VERSIONS versions per layer, the oldest first, at every commit (not
 * only once the hourly prune has run), with the file contents only the pruned versions held. Both write paths:
 * plaintext (a database before `keys:encrypt-existing`) and sealed (DESIGN 17).
 */
const MAX = 20;

describe.each([
  ['plaintext', false],
  ['sealed', true],
])('CONFIG_HISTORY_MAX_VERSIONS=20, %s writes', (_name, sealed) => {
  let api: TestApi;
  let db: DataSource;

  beforeAll(async () => {
    api = await startApi({ CONFIG_HISTORY_MAX_VERSIONS: String(MAX) });
    db = api.app.get(DataSource);
    await db.query('update config_encryption set encrypted_writes = $1', [sealed]);
  });
  afterAll(() => api.close());

  async function versions(query: Query): Promise<{ total: number; kept: number[] }> {
    const { res } = await send(api, 'GET', '/config-server/admin/history', {
      query: { ...query, limit: '100', total: 'true' },
      authorization: bearer(await adminToken()),
    });
    expect(res.statusCode).toBe(200);
    const page = res.json<{ total: number; versions: { version: number }[] }>();
    return { total: page.total, kept: page.versions.map((v) => v.version) };
  }

  const stored = async (host: string) => {
    const [row] = await db.query<{ versions: number; contents: number; counter: number }[]>(
      `select (select count(*)::int from config_layer_version v where v.layer_id = l.layer_id) as versions,
              (select count(*)::int from config_file_content c where c.layer_id = l.layer_id) as contents,
              (select versions::int from config_history_count c where c.layer_id = l.layer_id) as counter
         from config_layer l where l.host = $1`,
      [host],
    );
    return row;
  };

  it('keeps the last 20 after every write, and the counter and the rows agree', async () => {
    const host = unique('cap');
    const query = { host, serviceId: 'svc' };
    for (let i = 1; i <= MAX + 5; i++) {
      await putProperties(api, query, { 'n.i': i });
      // Checked at each commit: the hourly prune would leave 21, 22, … here.
      const { total, kept } = await versions(query);
      const newest = Math.min(i, MAX);
      expect([total, kept]).toEqual([newest, Array.from({ length: newest }, (_, k) => i - k)]);
    }
    expect(await stored(host)).toEqual({ versions: MAX, contents: 0, counter: MAX });
    // The oldest kept version rolls back; the one before it is gone.
    const admin = bearer(await adminToken());
    const gone = await api.app.inject({
      method: 'POST',
      url: `/config-server/admin/rollback?host=${host}&serviceId=svc&version=5`,
      headers: { authorization: admin, 'if-match': 'W/"25"' },
    });
    expect(gone.statusCode).toBe(404);
    const oldest = await api.app.inject({
      method: 'POST',
      url: `/config-server/admin/rollback?host=${host}&serviceId=svc&version=6`,
      headers: { authorization: admin, 'if-match': 'W/"25"' },
    });
    expect([oldest.statusCode, oldest.json<{ version: number }>().version]).toEqual([200, 26]);
    expect(await versions(query)).toEqual({ total: MAX, kept: Array.from({ length: MAX }, (_, k) => 26 - k) });
  });

  it('the hourly prune also removes a content with the last version that held it, not before', async () => {
    const host = unique('capp');
    const query = { host, serviceId: 'svc' };
    await putFiles(api, query, 'cert', { 'a.pem': 'first content' });
    await putFiles(api, query, 'file', { 'b.txt': 'other kind' });
    await putFiles(api, query, 'cert', { 'a.pem': 'second content' });
    // The prune is global and other files share the database: only this layer's versions are a century old,
    // so only they are past the age given here (the other tests age theirs by two years at most).
    await db.query(
      `update config_layer_version v set at = now() - interval '36600 days' from config_layer l
        where l.layer_id = v.layer_id and l.host = $1`,
      [host],
    );
    const history = api.app.get(ConfigHistoryRepository);
    // Keeping the last 2 prunes version 1 (version 2 still holds the first content); the last 1, version 2 too.
    await history.prune(36500, 2, 1_000_000);
    expect(await stored(host)).toEqual({ versions: 2, contents: sealed ? 3 : 0, counter: 2 });
    await history.prune(36500, 1, 1_000_000);
    expect(await stored(host)).toEqual({ versions: 1, contents: sealed ? 2 : 0, counter: 1 });
  });

  it('removes a file content with the last version that held it, not while a kept version holds it', async () => {
    const host = unique('capf');
    const query = { host, serviceId: 'svc' };
    await putFiles(api, query, 'cert', { 'a.pem': 'first content' }); // v1: a.pem's first content
    await putFiles(api, query, 'file', { 'b.txt': 'other kind' }); // v2: still names it
    await putFiles(api, query, 'cert', { 'a.pem': 'second content' }); // v3: a.pem changes
    for (let i = 4; i <= MAX; i++) await putProperties(api, query, { 'n.i': i });
    const contents = sealed ? [3, 3, 2] : [0, 0, 0];
    expect((await stored(host))?.contents).toBe(contents[0]);
    // Version 21 prunes version 1; version 2 still holds the first content.
    await putProperties(api, query, { 'n.i': MAX + 1 });
    expect(await stored(host)).toEqual({ versions: MAX, contents: contents[1], counter: MAX });
    // Version 22 prunes version 2, the last to hold it.
    await putProperties(api, query, { 'n.i': MAX + 2 });
    expect(await stored(host)).toEqual({ versions: MAX, contents: contents[2], counter: MAX });
    const { res } = await send(api, 'GET', '/config-server/admin/history/3', {
      query: { ...query, include: 'files' },
      authorization: bearer(await adminToken()),
    });
    expect(res.json<{ fileContents: unknown }>().fileContents).toEqual({
      cert: { 'a.pem': Buffer.from('second content').toString('base64') },
      file: { 'b.txt': Buffer.from('other kind').toString('base64') },
    });
  });
});
