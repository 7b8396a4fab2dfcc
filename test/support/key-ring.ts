import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigKeys, parseKeyRing } from '../../apps/api/config-server/encryption/index.js';

/** One ring for every test process and worker: they share the test database, so each reads what another sealed. */
const RING = `test-1: ${createHash('sha256').update('bindery test key ring').digest('base64')}\n`;

let file: string | undefined;

/** The suite's CONFIG_KEYRING_FILE (mode 0600, one key), for the api in tests and the processes they start. */
export function testKeyRingFile(): string {
  if (file === undefined) {
    file = join(mkdtempSync(join(tmpdir(), 'bindery-keyring-')), 'config-keyring');
    writeFileSync(file, RING, { mode: 0o600 });
  }
  return file;
}

/** The suite's key ring as the api holds it, for writers a test runs outside Nest (import, dev seed). */
export function testConfigKeys(): ConfigKeys {
  return new ConfigKeys(parseKeyRing(RING), undefined);
}
