import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let file: string | undefined;

/** A CONFIG_KEYRING_FILE for processes a test starts with NODE_ENV=production (mode 0600, one key). */
export function testKeyRingFile(): string {
  if (file === undefined) {
    file = join(mkdtempSync(join(tmpdir(), 'bindery-keyring-')), 'config-keyring');
    writeFileSync(file, `test-1: ${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
  }
  return file;
}
