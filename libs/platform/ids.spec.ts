import { describe, expect, it } from '@jest/globals';
import { ID_PATTERN, newId } from './ids.js';

describe('newId', () => {
  it('gives distinct UUIDv7s in base64url across refills of its random pool, stamped with the time', () => {
    const before = Date.now();
    // More than four refills of the 256-id pool.
    const ids = Array.from({ length: 1100 }, () => newId());
    const after = Date.now();
    expect(new Set(ids).size).toBe(ids.length);
    const stamps: number[] = [];
    for (const id of ids) {
      expect(id).toMatch(ID_PATTERN);
      expect(id).toHaveLength(22);
      const bytes = Buffer.from(id, 'base64url');
      expect(bytes).toHaveLength(16);
      expect(bytes[6] >> 4).toBe(7); // version
      expect(bytes[8] >> 6).toBe(0b10); // RFC 9562 variant
      stamps.push(bytes.readUIntBE(0, 6));
    }
    for (const stamp of stamps) {
      expect(stamp).toBeGreaterThanOrEqual(before);
      expect(stamp).toBeLessThanOrEqual(after);
    }
    // Time-ordered to the millisecond.
    expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
    // No two ids share their random bits (a pool slice handed out twice would).
    expect(new Set(ids.map((id) => Buffer.from(id, 'base64url').subarray(8).toString('hex'))).size).toBe(ids.length);
  });
});
