import { randomBytes } from 'node:crypto';
import { link, lstat, mkdir, open, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { KeyRingError } from './errors.js';

/** Bytes of a key encryption key: AES-256. */
export const KEY_BYTES = 32;
/** What a `kid` may be: readable in logs and the admin listing, and never mistaken for base64 key text. */
export const KID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;
/** Name of the key ring dev mode generates under the data directory (DESIGN 17). */
export const DEV_KEY_RING_FILE = 'config-keyring';

/** The key that wraps new data keys; `key` is not enumerable so logging the pair shows only the kid. */
export interface ActiveKey {
  readonly kid: string;
  readonly key: Buffer;
}

/**
 * Key encryption keys by `kid`, the first one active (DESIGN 17). Keys live in a private field and the
 * class prints and serialises as its kids only, so a logged or stringified ring never shows key bytes.
 */
export class KeyRing {
  readonly #keys: ReadonlyMap<string, Buffer>;
  readonly #active: ActiveKey;

  constructor(entries: ReadonlyArray<readonly [kid: string, key: Buffer]>) {
    if (entries.length === 0) throw new KeyRingError('a key ring needs at least one key');
    const keys = new Map<string, Buffer>();
    for (const [kid, key] of entries) {
      if (!KID_PATTERN.test(kid)) throw new KeyRingError(`a kid must match ${String(KID_PATTERN)}`);
      if (key.length !== KEY_BYTES) throw new KeyRingError(`key "${kid}" must be ${KEY_BYTES} bytes`);
      if (keys.has(kid)) throw new KeyRingError(`kid "${kid}" appears twice`);
      // A private copy: the caller's buffer may be reused or zeroed without changing the ring.
      keys.set(kid, Buffer.from(key));
    }
    this.#keys = keys;
    const [kid, key] = [...keys][0];
    this.#active = Object.defineProperties({} as ActiveKey, {
      kid: { value: kid, enumerable: true },
      key: { value: key, enumerable: false },
    });
  }

  /** The key new data keys are wrapped under: the first line of the file. */
  get active(): ActiveKey {
    return this.#active;
  }

  /** The key named `kid`, to unwrap a data key stored under it; undefined when the ring lacks it. */
  get(kid: string): Buffer | undefined {
    return this.#keys.get(kid);
  }

  /** Every kid, active first, in file order. */
  get kids(): string[] {
    return [...this.#keys.keys()];
  }

  /** JSON.stringify shows which keys there are, not what they are. */
  toJSON(): { active: string; kids: string[] } {
    return { active: this.#active.kid, kids: this.kids };
  }

  /** util.inspect (console.log, pino's fallbacks, jest diffs) likewise. */
  [inspect.custom](): string {
    return `KeyRing { active: ${JSON.stringify(this.#active.kid)}, kids: ${JSON.stringify(this.kids)} }`;
  }
}

/** Strict base64 of exactly 32 bytes: 43 characters, the last carrying 4 bits, then one `=`. */
const KEY_TEXT = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;

/** One `kid: base64` line; the key text goes no further than this function (errors quote the line number). */
function parseLine(line: string, lineNumber: number): [string, Buffer] {
  const colon = line.indexOf(':');
  if (colon < 0) throw new KeyRingError(`key ring line ${lineNumber}: expected "kid: base64 key"`);
  const kid = line.slice(0, colon).trim();
  const text = line.slice(colon + 1).trim();
  if (!KID_PATTERN.test(kid)) {
    throw new KeyRingError(`key ring line ${lineNumber}: the kid must match ${String(KID_PATTERN)}`);
  }
  if (!KEY_TEXT.test(text)) {
    throw new KeyRingError(
      `key ring line ${lineNumber}: the key of "${kid}" is not base64 of ${KEY_BYTES} bytes (openssl rand -base64 32)`,
    );
  }
  return [kid, Buffer.from(text, 'base64')];
}

/** Parses a key ring file's text: `kid: base64(32 bytes)` lines, blank lines and `#` comments, first active. */
export function parseKeyRing(text: string): KeyRing {
  const entries: [string, Buffer][] = [];
  const seen = new Map<string, number>();
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const [kid, key] = parseLine(line, index + 1);
    const first = seen.get(kid);
    if (first !== undefined) {
      throw new KeyRingError(`key ring line ${index + 1}: kid "${kid}" is already on line ${first}`);
    }
    seen.set(kid, index + 1);
    entries.push([kid, key]);
  });
  if (entries.length === 0) throw new KeyRingError('the key ring holds no key (expected "kid: base64 key" lines)');
  return new KeyRing(entries);
}

/** Reads `path` as a key ring, refusing a file that grants anything to group or others (DESIGN 17). */
export async function loadKeyRing(path: string): Promise<KeyRing> {
  let text: string;
  // One open file for the check and the read: the mode checked is the mode of the bytes read.
  const file = await open(path, 'r').catch((error: NodeJS.ErrnoException) => {
    throw new KeyRingError(`cannot open the key ring ${path}: ${error.code ?? error.message}`);
  });
  try {
    const stats = await file.stat();
    if (!stats.isFile()) throw new KeyRingError(`the key ring ${path} is not a regular file`);
    const mode = stats.mode & 0o777;
    if ((mode & 0o077) !== 0) {
      const octal = mode.toString(8).padStart(4, '0');
      throw new KeyRingError(
        `the key ring ${path} has mode ${octal}; it must grant nothing to group or others (chmod 600)`,
      );
    }
    text = await file.readFile('utf8');
  } finally {
    await file.close();
  }
  try {
    return parseKeyRing(text);
  } catch (error) {
    if (error instanceof KeyRingError) throw new KeyRingError(`${path}: ${error.message}`);
    throw error;
  }
}

/** Whether `path` exists; any error but "not found" is the caller's to see. */
async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** Dev mode (DESIGN 17): `<dataDir>/config-keyring` with one random key, created when missing, else kept. */
export async function ensureDevKeyRing(dataDir: string): Promise<string> {
  const path = join(dataDir, DEV_KEY_RING_FILE);
  // The usual case, an existing ring, writes nothing (no key bytes in a temporary file at every start).
  if (await exists(path)) return path;
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const kid = `dev-${randomBytes(4).toString('hex')}`;
  const text = `# Generated for development by Bindery; not for production (DESIGN 17).\n${kid}: ${randomBytes(KEY_BYTES).toString('base64')}\n`;
  // Written whole to a private temporary file, then linked into place: a reader never sees half a ring, and
  // when two processes start together the first link wins and both use that ring.
  const temporary = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temporary, text, { mode: 0o600, flag: 'wx' });
  try {
    await link(temporary, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(temporary);
  }
  return path;
}
