import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { calculateJwkThumbprint } from 'jose';
import { ensureDevKey } from './dev-keys.js';

describe('ensureDevKey', () => {
  it('callers racing on a fresh directory all get the one key, and no temporary file is left', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bindery-devkey-'));
    const keys = await Promise.all(Array.from({ length: 20 }, () => ensureDevKey(dir)));
    expect(new Set(keys.map((k) => k.kid)).size).toBe(1);
    expect(await readdir(join(dir, 'dev-keys'))).toEqual(['es256.private.jwk.json']);
    expect((await ensureDevKey(dir)).kid).toBe(keys[0]?.kid);
  });

  it("names the key by its RFC 7638 thumbprint (DESIGN 10), a file's older kid included", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bindery-devkey-'));
    const key = await ensureDevKey(dir);
    const thumbprint = await calculateJwkThumbprint(key.publicJwk, 'sha256');
    expect(key.kid).toBe(thumbprint);
    // A key generated before kept `dev-<time>` in its file: it is named by its thumbprint all the same.
    const file = join(dir, 'dev-keys', 'es256.private.jwk.json');
    await writeFile(file, JSON.stringify({ ...JSON.parse(await readFile(file, 'utf8')), kid: 'dev-old' }));
    expect((await ensureDevKey(dir)).kid).toBe(thumbprint);
  });
});
