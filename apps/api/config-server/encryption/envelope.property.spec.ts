import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { randomBytes } from 'node:crypto';
import type { JsonValue } from '#database';
import { assertProperty } from '../../../../test/support/property.js';
import {
  KeyRing,
  SEALED_OVERHEAD,
  newDataKey,
  openJson,
  openValue,
  sealJson,
  sealValue,
  unwrapDataKey,
  wrapDataKey,
} from './index.js';
import { decryptError } from '../../../../test/support/decrypt-error.js';

/** Large contents (certificates, files) made from a seed: fast-check keeps generated arrays short. */
function pseudoRandom(length: number, seed: number): Buffer {
  const out = Buffer.alloc(length);
  let x = seed | 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}
const smallBytes = fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b));
const bytes = fc.oneof(
  smallBytes,
  fc.tuple(fc.integer({ min: 65, max: 256 * 1024 }), fc.nat()).map(([length, seed]) => pseudoRandom(length, seed)),
);
const jsonValue = fc
  .oneof(fc.jsonValue(), fc.jsonValue({ stringUnit: 'binary' }), fc.jsonValue({ stringUnit: 'grapheme' }))
  .map((v) => v as JsonValue);
const kid = fc.stringMatching(/^[A-Za-z0-9._-]{1,64}$/);

const aadText = fc.string({ unit: 'binary', maxLength: 40 });

describe('envelope (AES-256-GCM, property-based)', () => {
  it('round-trips every JSON value through sealJson and openJson', async () => {
    await assertProperty(
      'JSON round trip',
      fc.property(jsonValue, aadText, (value, aad) => {
        const key = newDataKey();
        const sealed = sealJson(key, value, aad);
        // What JSON text carries: the same value, except -0 which reads back as 0 (as jsonb stores it today).
        expect(openJson(key, sealed, aad)).toEqual(JSON.parse(JSON.stringify(value)));
        expect(sealed.length).toBe(Buffer.byteLength(JSON.stringify(value)) + SEALED_OVERHEAD);
      }),
      300,
    );
  });

  it('round-trips any bytes through sealValue and openValue', async () => {
    await assertProperty(
      'bytes round trip',
      fc.property(bytes, aadText, (plaintext, aad) => {
        const key = newDataKey();
        const sealed = sealValue(key, plaintext, aad);
        expect(sealed[0]).toBe(1);
        expect(openValue(key, sealed, aad).equals(plaintext)).toBe(true);
      }),
      200,
    );
  });

  it('flipping any single bit of a sealed value fails to open', async () => {
    await assertProperty(
      'bit flip',
      fc.property(bytes, fc.nat(), fc.nat(7), (plaintext, at, bit) => {
        const key = newDataKey();
        const aad = '["h","s",null,null,null,"a.b"]';
        const sealed = sealValue(key, plaintext, aad);
        // Header and tag bits come up as often as ciphertext bits, however long the plaintext.
        const index = at % 2 === 0 ? at % SEALED_OVERHEAD : at % sealed.length;
        const tampered = Buffer.from(sealed);
        tampered[index] ^= 1 << bit;
        decryptError(() => openValue(key, tampered, aad));
      }),
      500,
    );
  });

  it('draws a new nonce and a new data key every time, across refills of their pools', () => {
    // More than one pool's worth of each (512 nonces, 64 keys): a refill must not hand out old bytes.
    const key = newDataKey();
    const nonces = Array.from({ length: 1500 }, () =>
      sealValue(key, Buffer.of(1), 'aad').subarray(1, 13).toString('hex'),
    );
    expect(new Set(nonces).size).toBe(nonces.length);
    const keys = Array.from({ length: 200 }, () => newDataKey());
    expect(new Set(keys.map((k) => k.toString('hex'))).size).toBe(keys.length);
    expect(keys.every((k) => k.length === 32 && !k.equals(Buffer.alloc(32)))).toBe(true);
  });

  it('two seals of the same plaintext differ (a random nonce each time)', async () => {
    await assertProperty(
      'fresh nonce',
      fc.property(bytes, (plaintext) => {
        const key = newDataKey();
        const [one, two] = [sealValue(key, plaintext, 'aad'), sealValue(key, plaintext, 'aad')];
        expect(one.subarray(1, 13).equals(two.subarray(1, 13))).toBe(false);
        expect(one.equals(two)).toBe(false);
      }),
      200,
    );
  });

  it('wraps and unwraps data keys; a ring without the kid fails naming it; a relabelled or altered key fails', async () => {
    await assertProperty(
      'wrap and unwrap',
      fc.property(
        fc.uniqueArray(kid, { minLength: 2, maxLength: 4 }),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.nat(),
        (kids, raw, at) => {
          const dataKey = Buffer.from(raw);
          const shared = randomBytes(32);
          // Every kid holds the same key bytes: only the kid in the AAD tells a relabelled key apart.
          const ring = new KeyRing(kids.map((k) => [k, shared] as const));
          const wrapped = wrapDataKey(ring, dataKey);
          expect(wrapped.kid).toBe(kids[0]);
          expect(wrapped.wrapped.includes(dataKey)).toBe(false);
          expect(unwrapDataKey(ring, wrapped).equals(dataKey)).toBe(true);
          // After a rotation the old kid is no longer first and still unwraps.
          const rotated = new KeyRing([['rotated-in', randomBytes(32)], ...kids.map((k) => [k, shared] as const)]);
          expect(unwrapDataKey(rotated, wrapped).equals(dataKey)).toBe(true);

          const without = new KeyRing(kids.slice(1).map((k) => [k, randomBytes(32)] as const));
          const missing = decryptError(() => unwrapDataKey(without, wrapped));
          expect(missing.kid).toBe(kids[0]);
          expect(missing.message).toContain(`"${kids[0]}"`);

          const relabelled = decryptError(() => unwrapDataKey(ring, { kid: kids[1], wrapped: wrapped.wrapped }));
          expect(relabelled.message).toContain(`"${kids[1]}"`);

          const tampered = Buffer.from(wrapped.wrapped);
          tampered[at % tampered.length] ^= 1 << (at % 8);
          expect(decryptError(() => unwrapDataKey(ring, { ...wrapped, wrapped: tampered })).kid).toBe(kids[0]);
        },
      ),
      200,
    );
  });
});
