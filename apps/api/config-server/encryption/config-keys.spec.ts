import { describe, expect, it } from '@jest/globals';
import { chmod, mkdtemp, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeyRingError } from './errors.js';
import { configKeysFor, PLAINTEXT_WARNING } from './config-keys.js';

/** DESIGN 17: which key ring the api uses, and when it refuses to start. */
const base = { production: false, dataDir: '' };
const STORE = { historyDays: 365, historyMaxVersions: 1000 };
const KEY = Buffer.alloc(32, 7).toString('base64');

async function ringFile(mode: number): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), 'bindery-ck-')), 'ring');
  await writeFile(file, `k1: ${KEY}\nk0: ${Buffer.alloc(32, 1).toString('base64')}\n`);
  await chmod(file, mode);
  return file;
}

describe('configKeysFor', () => {
  it('loads CONFIG_KEYRING_FILE (first key active), with no warning', async () => {
    const keys = await configKeysFor({
      ...base,
      production: true,
      configStore: { ...STORE, keyringFile: await ringFile(0o600), allowPlaintext: false },
    });
    expect(keys.ring?.active.kid).toBe('k1');
    expect(keys.ring?.kids).toEqual(['k1', 'k0']);
    expect(keys.warning).toBeUndefined();
  });

  it('refuses a ring others may read', async () => {
    const file = await ringFile(0o644);
    await expect(
      configKeysFor({ ...base, configStore: { ...STORE, keyringFile: file, allowPlaintext: false } }),
    ).rejects.toBeInstanceOf(KeyRingError);
  });

  it('production without a ring stops start-up, naming the setting', async () => {
    await expect(
      configKeysFor({
        ...base,
        production: true,
        configStore: { ...STORE, keyringFile: undefined, allowPlaintext: false },
      }),
    ).rejects.toThrow(/^Invalid setting CONFIG_KEYRING_FILE: required with NODE_ENV=production/);
  });

  it('ALLOW_PLAINTEXT_CONFIG: no ring, and a warning for every start', async () => {
    const keys = await configKeysFor({
      ...base,
      production: true,
      configStore: { ...STORE, keyringFile: undefined, allowPlaintext: true },
    });
    expect(keys.ring).toBeNull();
    expect(keys.warning).toBe(PLAINTEXT_WARNING);
  });

  it('outside production without a ring: one generated under the data directory (0600), the same next time', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'bindery-ck-dev-'));
    const settings = { ...base, dataDir, configStore: { ...STORE, keyringFile: undefined, allowPlaintext: false } };
    const first = await configKeysFor(settings);
    const second = await configKeysFor(settings);
    expect(first.ring?.active.kid).toBeDefined();
    expect(second.ring?.active.kid).toBe(first.ring?.active.kid);
    expect(first.warning).toContain(join(dataDir, 'config-keyring'));
    expect((await stat(join(dataDir, 'config-keyring'))).mode & 0o077).toBe(0);
  });
});
