import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { lstat, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigReader } from './config-reader.js';
import type { TokenSource } from './token-source.js';

const FILES = { 'app.yml': Buffer.from('password: s3cret\n').toString('base64'), 'ca.pem': 'LS0tLS0=' };

/** A reader whose config server answers FILES, with a token source that needs no issuer. */
function reader(): ConfigReader {
  const fetchStub = (): Promise<Response> => Promise.resolve(Response.json(FILES, { headers: { etag: '"1"' } }));
  const tokens = { token: () => Promise.resolve('token') } as unknown as TokenSource;
  const identity = { host: 'h1', serviceId: 'petstore', envTag: 'dev', apiUrl: 'http://api.invalid' };
  return new ConfigReader(identity, tokens, fetchStub, () => undefined);
}

describe('ConfigReader.writeFiles: secrets on disk (DESIGN 11, 17)', () => {
  let root: string;
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'bindery-files-'));
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("writes each file for the runtime's user only, in a directory it creates for that user only", async () => {
    const dir = join(root, 'config', 'files');
    expect((await reader().writeFiles(dir)).sort()).toEqual(['app.yml', 'ca.pem']);
    expect((await lstat(dir)).mode & 0o777).toBe(0o700);
    for (const name of ['app.yml', 'ca.pem']) expect((await lstat(join(dir, name))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(dir, 'app.yml'), 'utf8')).toBe('password: s3cret\n');
    expect((await readdir(dir)).sort()).toEqual(['app.yml', 'ca.pem']);
  });

  it('replaces a symlink in the way instead of writing through it', async () => {
    const victim = join(root, 'victim');
    await writeFile(victim, 'untouched');
    await symlink(victim, join(root, 'app.yml'));
    await reader().writeFiles(root);
    expect(await readFile(victim, 'utf8')).toBe('untouched');
    const written = await lstat(join(root, 'app.yml'));
    expect(written.isSymbolicLink()).toBe(false);
    expect(written.mode & 0o777).toBe(0o600);
    expect(await readFile(join(root, 'app.yml'), 'utf8')).toBe('password: s3cret\n');
  });
});
