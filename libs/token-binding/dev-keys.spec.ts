import { mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { ensureDevKey } from './dev-keys.js';

describe('ensureDevKey', () => {
  it('callers racing on a fresh directory all get the one key, and no temporary file is left', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'bindery-devkey-'));
    const keys = await Promise.all(Array.from({ length: 20 }, () => ensureDevKey(dir)));
    expect(new Set(keys.map((k) => k.kid)).size).toBe(1);
    expect(await readdir(join(dir, 'dev-keys'))).toEqual(['es256.private.jwk.json']);
    expect((await ensureDevKey(dir)).kid).toBe(keys[0]?.kid);
  });
});
