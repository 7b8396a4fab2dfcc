import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import {
  KeyRing,
  SEALED_OVERHEAD,
  newDataKey,
  openJson,
  openValue,
  sealJson,
  sealValue,
  wrapDataKey,
} from './index.js';
import { decryptError } from '../../../../test/support/decrypt-error.js';

describe('envelope (examples)', () => {
  it('never holds the plaintext, and refuses short buffers, unknown formats, wrong keys and wrong AADs', () => {
    const key = newDataKey();
    const secret = Buffer.from('hunter2-hunter2-hunter2');
    const sealed = sealValue(key, secret, 'aad');
    expect(sealed.includes(secret.subarray(0, 8))).toBe(false);
    expect(openValue(key, sealed, 'aad').equals(secret)).toBe(true);
    expect(decryptError(() => openValue(key, sealed.subarray(0, SEALED_OVERHEAD - 1), 'aad')).message).toMatch(
      /too short/,
    );
    expect(
      decryptError(() => openValue(key, Buffer.concat([Buffer.of(2), sealed.subarray(1)]), 'aad')).message,
    ).toMatch(/unknown format 2/);
    expect(decryptError(() => openValue(newDataKey(), sealed, 'aad')).message).toMatch(/fails authentication/);
    expect(decryptError(() => openValue(key, sealed, 'aae')).message).not.toContain('hunter2');
    expect(decryptError(() => openValue(key.subarray(1), sealed, 'aad')).message).toMatch(/fails authentication/);
    expect(decryptError(() => openJson(key, sealed, 'aad')).message).toBe('sealed value is not JSON');
  });

  it('reads -0 back as 0, like the jsonb column it replaces', () => {
    const key = newDataKey();
    expect(Object.is(openJson(key, sealJson(key, -0, 'a'), 'a'), 0)).toBe(true);
    expect(openJson(key, sealJson(key, { n: [-0, 1.5e300, 'é\ud800'] }, 'a'), 'a')).toEqual({
      n: [0, 1.5e300, 'é\ud800'],
    });
  });

  it('seals the empty plaintext, and refuses a data key of the wrong size or an ill-formed AAD', () => {
    const key = newDataKey();
    expect(openValue(key, sealValue(key, Buffer.alloc(0), ''), '').length).toBe(0);
    expect(() => sealValue(key.subarray(0, 16), Buffer.of(1), 'aad')).toThrow(RangeError);
    expect(() => wrapDataKey(new KeyRing([['k', randomBytes(32)]]), Buffer.alloc(16))).toThrow(RangeError);
    expect(() => sealValue(key, Buffer.of(1), '\ud800')).toThrow(TypeError);
    expect(newDataKey().length).toBe(32);
    expect(newDataKey().equals(newDataKey())).toBe(false);
  });

  it('uses the bytes a key Buffer holds now, even after they changed since it was last used', () => {
    const key = newDataKey();
    const sealed = sealValue(key, Buffer.from('before'), 'aad');
    const original = Buffer.from(key);
    key[0] = (key[0] ?? 0) ^ 1;
    // A KeyObject kept for the Buffer's identity alone would still open it.
    expect(decryptError(() => openValue(key, sealed, 'aad')).message).toMatch(/fails authentication/);
    const resealed = sealValue(key, Buffer.from('after'), 'aad');
    expect(decryptError(() => openValue(original, resealed, 'aad')).message).toMatch(/fails authentication/);
    expect(openValue(original, sealed, 'aad').toString()).toBe('before');
  });
});
