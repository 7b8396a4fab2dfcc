import { createCipheriv, createDecipheriv, createSecretKey, randomFillSync, type KeyObject } from 'node:crypto';
import type { JsonValue, LayerAddress } from '#database';
import { DecryptError } from './errors.js';
import type { KeyRing } from './key-ring.js';

/** AES-256-GCM throughout (DESIGN 17). */
const ALGORITHM = 'aes-256-gcm';
/** Bytes of a data key. */
export const DATA_KEY_BYTES = 32;
/** A 96-bit nonce: GCM's native size, random for every encryption. */
const NONCE_BYTES = 12;
/** A 128-bit tag, always given explicitly so a truncated tag can never be accepted. */
const TAG_BYTES = 16;
/** First byte of a sealed value: the format, so a later format can be told apart from this one. */
export const SEALED_VERSION = 1;
/** Bytes a sealed value adds to its plaintext: version, nonce and tag. */
export const SEALED_OVERHEAD = 1 + NONCE_BYTES + TAG_BYTES;
/** Length of a wrapped data key: nonce, tag and the encrypted 32 bytes. */
const WRAPPED_BYTES = NONCE_BYTES + TAG_BYTES + DATA_KEY_BYTES;
/** Fixed label of a wrapped key's AAD; a kid cannot hold `:`, so label plus kid names one kid only. */
const WRAP_LABEL = 'bindery:data-key:v1:';

/** A data key as stored: encrypted under the key encryption key `kid`, as nonce | tag | ciphertext. */
export interface WrappedKey {
  readonly kid: string;
  readonly wrapped: Buffer;
}

// Each randomBytes call costs ~5 µs in OpenSSL whatever its size (a write sealing 26 values spent 0.4 ms
// on nonces, bench config-history); one call fills 512 nonces here, each byte used once. Nonces are public.
const NONCES = Buffer.alloc(NONCE_BYTES * 512);
let noncesUsed = NONCES.length;

/** A fresh random nonce, copied into `out` at `offset`. */
function putNonce(out: Buffer, offset: number): Buffer {
  if (noncesUsed === NONCES.length) {
    randomFillSync(NONCES);
    noncesUsed = 0;
  }
  NONCES.copy(out, offset, noncesUsed, (noncesUsed += NONCE_BYTES));
  return out.subarray(offset, offset + NONCE_BYTES);
}

// Node 22+ checks a raw key's bytes on every createCipheriv (about 10 µs more than a KeyObject on Node 24,
// 21 times per sealed write): each key's KeyObject is made once, kept while its Buffer lives, and made
// again should the Buffer's bytes have changed.
const KEY_OBJECTS = new WeakMap<Buffer, { readonly bytes: Buffer; readonly object: KeyObject }>();

function keyObjectOf(key: Buffer): KeyObject {
  const known = KEY_OBJECTS.get(key);
  if (known !== undefined && known.bytes.equals(key)) return known.object;
  const object = createSecretKey(key);
  KEY_OBJECTS.set(key, { bytes: Buffer.from(key), object });
  return object;
}

/**
 * AES-256-GCM with the explicit 16-byte tag; `aad` authenticated. Answers `prefix` | nonce | tag |
 * ciphertext in one buffer (the prefix: the sealed value's format byte, or none).
 */
function encrypt(key: Buffer, plaintext: Buffer, aad: Buffer, prefix: readonly number[] = []): Buffer {
  const head = prefix.length;
  const out = Buffer.allocUnsafe(head + NONCE_BYTES + TAG_BYTES + plaintext.length);
  prefix.forEach((byte, i) => (out[i] = byte));
  const cipher = createCipheriv(ALGORITHM, keyObjectOf(key), putNonce(out, head), { authTagLength: TAG_BYTES });
  cipher.setAAD(aad);
  // GCM is a stream mode: update answers every byte it is given, and final none.
  const body = cipher.update(plaintext);
  const rest = cipher.final();
  if (body.length !== plaintext.length || rest.length !== 0) throw new Error('AES-GCM answered an unexpected length');
  body.copy(out, head + NONCE_BYTES + TAG_BYTES);
  cipher.getAuthTag().copy(out, head + NONCE_BYTES);
  return out;
}

/** The inverse of `encrypt`; throws (any error) when the key, the AAD or a byte differs. */
function decrypt(key: Buffer, sealed: Buffer, aad: Buffer): Buffer {
  const nonce = sealed.subarray(0, NONCE_BYTES);
  const tag = sealed.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES);
  const decipher = createDecipheriv(ALGORITHM, keyObjectOf(key), nonce, { authTagLength: TAG_BYTES });
  decipher.setAAD(aad);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(sealed.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]);
}

/** A key of the wrong size is a bug of the caller, said before OpenSSL says something vaguer. */
function assertDataKey(dataKey: Buffer): void {
  if (dataKey.length !== DATA_KEY_BYTES) throw new RangeError(`a data key must be ${DATA_KEY_BYTES} bytes`);
}

// The same for data keys (~20 µs a call under load): drawn 64 at a time, each copied out once and wiped.
const KEYS = Buffer.alloc(DATA_KEY_BYTES * 64);
let keysUsed = KEYS.length;

/** A fresh random data key: one per layer version, one per stored file content (DESIGN 17). */
export function newDataKey(): Buffer {
  if (keysUsed === KEYS.length) {
    randomFillSync(KEYS);
    keysUsed = 0;
  }
  const key = Buffer.from(KEYS.subarray(keysUsed, keysUsed + DATA_KEY_BYTES));
  KEYS.fill(0, keysUsed, (keysUsed += DATA_KEY_BYTES));
  return key;
}

/** Encrypts `dataKey` under the ring's active key; the kid is in the AAD so the label cannot be changed. */
export function wrapDataKey(ring: KeyRing, dataKey: Buffer): WrappedKey {
  assertDataKey(dataKey);
  const { kid, key } = ring.active;
  return { kid, wrapped: encrypt(key, dataKey, Buffer.from(WRAP_LABEL + kid, 'utf8')) };
}

/** Decrypts a stored data key; DecryptError naming the kid when the ring lacks it or the bytes fail. */
export function unwrapDataKey(ring: KeyRing, wrapped: WrappedKey): Buffer {
  const key = ring.get(wrapped.kid);
  if (key === undefined) {
    throw new DecryptError(`data key wrapped under kid "${wrapped.kid}": the key ring has no such kid`, wrapped.kid);
  }
  try {
    if (wrapped.wrapped.length !== WRAPPED_BYTES) throw new Error('length');
    return decrypt(key, wrapped.wrapped, Buffer.from(WRAP_LABEL + wrapped.kid, 'utf8'));
  } catch {
    throw new DecryptError(`data key wrapped under kid "${wrapped.kid}" fails authentication`, wrapped.kid);
  }
}

/** The AAD bytes of a value: the format byte too, so every stored byte is authenticated. */
function valueAadBytes(aad: string): Buffer {
  // Only well-formed strings: UTF-8 turns every lone surrogate into U+FFFD, which would make two AADs equal.
  if (!aad.isWellFormed()) throw new TypeError('the AAD of a value must be a well-formed string');
  // The format byte is below 0x80, so as a character it encodes to that one byte.
  return Buffer.from(String.fromCharCode(SEALED_VERSION) + aad, 'utf8');
}

/** Encrypts a property value or file content: version (1) | nonce (12) | tag (16) | ciphertext. */
export function sealValue(dataKey: Buffer, plaintext: Buffer, aad: string): Buffer {
  assertDataKey(dataKey);
  return encrypt(dataKey, plaintext, valueAadBytes(aad), [SEALED_VERSION]);
}

/** Decrypts what `sealValue` made under the same data key and AAD; anything else is a DecryptError. */
export function openValue(dataKey: Buffer, sealed: Buffer, aad: string): Buffer {
  if (sealed.length < SEALED_OVERHEAD) throw new DecryptError('sealed value is too short');
  if (sealed[0] !== SEALED_VERSION) throw new DecryptError(`sealed value has unknown format ${sealed[0]}`);
  try {
    assertDataKey(dataKey);
    return decrypt(dataKey, sealed.subarray(1), valueAadBytes(aad));
  } catch {
    throw new DecryptError('sealed value fails authentication (another key, layer or name, or altered bytes)');
  }
}

/**
 * The AAD of a value at `address` named `name` (a property key, or `cert/<name>` / `file/<name>` for a
 * file, as given): JSON of a fixed-order array, so different inputs never give the same text and null
 * stays apart from the empty string.
 */
export function valueAad(address: LayerAddress, name: string): string {
  let head = AAD_HEADS.get(address);
  if (head === undefined) {
    const parts = [address.host, address.serviceId, address.productId, address.productVersion, address.envTag];
    // The array's text without its closing bracket: the same text as the whole array's, made once per address.
    head = JSON.stringify(parts).slice(0, -1);
    AAD_HEADS.set(address, head);
  }
  return `${head},${JSON.stringify(name)}]`;
}

/** The address part of `valueAad`, by address object: a write seals every value of one layer. */
const AAD_HEADS = new WeakMap<LayerAddress, string>();

/** Seals a property value as its UTF-8 JSON text. */
export function sealJson(dataKey: Buffer, value: JsonValue, aad: string): Buffer {
  return sealValue(dataKey, Buffer.from(JSON.stringify(value), 'utf8'), aad);
}

/** Opens what `sealJson` sealed; text that is not JSON is a DecryptError too (never shown). */
export function openJson(dataKey: Buffer, sealed: Buffer, aad: string): JsonValue {
  const text = openValue(dataKey, sealed, aad).toString('utf8');
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    throw new DecryptError('sealed value is not JSON');
  }
}
