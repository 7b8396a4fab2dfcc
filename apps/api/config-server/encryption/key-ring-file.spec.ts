import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeyRingError, ensureDevKeyRing, loadKeyRing } from './index.js';

const keyA = randomBytes(32);
const keyB = randomBytes(32);
const textA = keyA.toString('base64');
const textB = keyB.toString('base64');

/** Every way the key text could show up in a message: whole, base64 fragments, hex. */
function expectNoKeyMaterial(message: string, keyText: string): void {
  expect(message).not.toContain(keyText);
  for (let at = 0; at + 8 <= keyText.length; at += 4) expect(message).not.toContain(keyText.slice(at, at + 8));
  expect(message).not.toContain(Buffer.from(keyText, 'base64').toString('hex').slice(0, 16));
}

describe('key ring files', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'bindery-keyring-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  async function ringFile(name: string, mode: number): Promise<string> {
    const path = join(dir, name);
    await writeFile(path, `# test\nk1: ${textA}\nk2: ${textB}\n`, { mode: 0o600 });
    await chmod(path, mode);
    return path;
  }

  it.each(['0600', '0400'])('loads a file of mode %s', async (octal) => {
    const ring = await loadKeyRing(await ringFile(`ok-${octal}`, parseInt(octal, 8)));
    expect(ring.kids).toEqual(['k1', 'k2']);
    expect(ring.active.key.equals(keyA)).toBe(true);
  });

  it.each(['0644', '0640', '0604', '0610', '0601', '0660'])(
    'refuses a file of mode %s, saying which mode',
    async (octal) => {
      const path = await ringFile(`bad-${octal}`, parseInt(octal, 8));
      const error = await loadKeyRing(path).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(KeyRingError);
      expect((error as Error).message).toContain(`mode ${octal};`);
      expect((error as Error).message).toContain(path);
      expectNoKeyMaterial((error as Error).message, textA);
    },
  );

  it('refuses a missing file and a directory', async () => {
    await expect(loadKeyRing(join(dir, 'nope'))).rejects.toThrow(/cannot open the key ring .*nope: ENOENT/);
    await expect(loadKeyRing(dir)).rejects.toThrow(KeyRingError);
  });

  it('names the file and the line of a bad line, without its key', async () => {
    const path = join(dir, 'bad-line');
    await writeFile(path, `k1: ${textA}\nk2 ${textB}\n`, { mode: 0o600 });
    const error = await loadKeyRing(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(KeyRingError);
    expect((error as Error).message).toMatch(/bad-line: key ring line 2: expected/);
    expectNoKeyMaterial((error as Error).message, textB);
  });

  it('dev mode creates a private ring with one dev key once, and keeps it on the next call', async () => {
    const dataDir = join(dir, 'data', 'nested');
    const path = await ensureDevKeyRing(dataDir);
    expect(path).toBe(join(dataDir, 'config-keyring'));
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const first = await readFile(path, 'utf8');
    const ring = await loadKeyRing(path);
    expect(ring.kids).toHaveLength(1);
    expect(ring.active.kid).toMatch(/^dev-[0-9a-f]{8}$/);
    expect(await ensureDevKeyRing(dataDir)).toBe(path);
    expect(await readFile(path, 'utf8')).toBe(first);
    expect(await readdir(dataDir)).toEqual(['config-keyring']);
  });

  it('dev mode started by several processes at once ends with one ring all of them use', async () => {
    const dataDir = join(dir, 'racing');
    const paths = await Promise.all(Array.from({ length: 8 }, () => ensureDevKeyRing(dataDir)));
    expect(new Set(paths).size).toBe(1);
    expect(await readdir(dataDir)).toEqual(['config-keyring']);
    expect((await loadKeyRing(paths[0])).kids).toHaveLength(1);
  });
});
