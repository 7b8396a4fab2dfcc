import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { migrate, OAuthClientRepository } from '#database';
import { DEV_CLIENT_ID, DEV_CLIENT_SECRET_FILE, ensureDevClient } from '../../apps/api/token-issuer/dev-client.js';
import { listenApi, type ListeningApi } from '../support/api.js';
import { ISSUER, writeIssuerKeyFile } from '../support/tokens.js';

/** `npm start`'s dev client across restarts: what runs `prepare()` in scripts/dev.ts, against the real issuer. */
describe('the dev runtime client petstore-dev', () => {
  const keys = writeIssuerKeyFile();
  let api: ListeningApi;
  let db: DataSource;

  beforeAll(async () => {
    await migrate(process.env.DATABASE_SESSION_URL || (process.env.DATABASE_URL ?? ''));
    api = await listenApi({ JWT_JWKS_FILE: '', TOKEN_ISSUER_KEY_FILE: keys.file, JWT_ISSUER: ISSUER });
    db = api.app.get(DataSource);
    await new OAuthClientRepository(db).delete(DEV_CLIENT_ID, 'all');
  });
  afterAll(() => api?.close());

  const tokenStatus = async (secret: string): Promise<number> => {
    const response = await fetch(`${api.url}/oauth2/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${DEV_CLIENT_ID}:${secret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials&env=dev',
    });
    return response.status;
  };

  it('keeps its secret across restarts of one data dir, so a running runtime still gets tokens', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'bindery-devclient-'));
    const first = await ensureDevClient(db, 'dev-host', dataDir);
    expect(first.outcome).toBe('created');
    expect(await tokenStatus(first.clientSecret)).toBe(200);
    const file = join(dataDir, DEV_CLIENT_SECRET_FILE);
    expect((await readFile(file, 'utf8')).trim()).toBe(first.clientSecret);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const before = await new OAuthClientRepository(db).find(DEV_CLIENT_ID);

    // The next start: the same secret, the record untouched.
    const second = await ensureDevClient(db, 'dev-host', dataDir);
    expect(second).toEqual({ ...first, outcome: 'kept' });
    expect(await tokenStatus(first.clientSecret)).toBe(200);
    expect(await new OAuthClientRepository(db).find(DEV_CLIENT_ID)).toEqual(before);

    // A fresh database with the same data dir (DATABASE_URL changed): the kept secret is registered again.
    await new OAuthClientRepository(db).delete(DEV_CLIENT_ID, 'all');
    const recreated = await ensureDevClient(db, 'dev-host', dataDir);
    expect(recreated).toEqual({ ...first, outcome: 'created' });
    expect(await tokenStatus(first.clientSecret)).toBe(200);
  });

  it('a record whose secret an operator rotated, or a new data dir: a new secret, kept for the next start', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'bindery-devclient-'));
    const kept = await ensureDevClient(db, 'dev-host', dataDir);
    const other = await mkdtemp(join(tmpdir(), 'bindery-devclient-'));
    const rotated = await ensureDevClient(db, 'dev-host', other);
    expect(rotated.outcome).toBe('rotated');
    expect(rotated.clientSecret).not.toBe(kept.clientSecret);
    expect(await tokenStatus(kept.clientSecret)).toBe(401);
    expect(await tokenStatus(rotated.clientSecret)).toBe(200);
    expect(await ensureDevClient(db, 'dev-host', other)).toEqual({ ...rotated, outcome: 'kept' });
  });
});
