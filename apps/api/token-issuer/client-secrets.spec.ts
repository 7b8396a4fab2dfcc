import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { HASHES_PER_CHECK, hashSecret, PADDING_HASH, SecretChecker, secretMatches } from './client-secrets.js';

/** The checker, with each hash it computes recorded (the count is what the time of an answer follows). */
function countingChecker(): { checker: SecretChecker; computed: string[] } {
  const checker = new SecretChecker();
  const computed: string[] = [];
  const real = checker.check.bind(checker);
  jest.spyOn(checker, 'check').mockImplementation((secret, hash) => {
    computed.push(hash);
    return real(secret, hash);
  });
  return { checker, computed };
}

describe('SecretChecker (DESIGN 10: no answer tells an existing client id from a made-up one)', () => {
  afterEach(() => {
    jest.restoreAllMocks();
  });

  it('computes the same number of hashes for no client, one without grace and one in rotation grace', async () => {
    const current = await hashSecret('current');
    const previous = await hashSecret('previous');
    const cases = [
      ['an unknown client', [], 'current', false],
      ['a client, wrong secret', [current], 'wrong', false],
      ['a client, right secret', [current], 'current', true],
      ['a client in grace, wrong secret', [current, previous], 'wrong', false],
      ['a client in grace, current secret', [current, previous], 'current', true],
      ['a client in grace, previous secret', [current, previous], 'previous', true],
    ] as const;
    for (const [, hashes, secret, expected] of cases) {
      const { checker, computed } = countingChecker();
      expect(await checker.matchesAny(secret, hashes)).toBe(expected);
      expect(computed).toHaveLength(HASHES_PER_CHECK);
      // The real hashes first, then padding: every real one is computed.
      expect(computed).toEqual([...hashes, ...Array<string>(HASHES_PER_CHECK - hashes.length).fill(PADDING_HASH)]);
    }
  });

  it('never lets anyone in on the padding hash, even were some secret to match it', async () => {
    const current = await hashSecret('current');
    const { checker } = countingChecker();
    // A check that says yes to the padding alone: the answer must still be no.
    jest.spyOn(checker, 'check').mockImplementation((_, hash) => Promise.resolve(hash === PADDING_HASH));
    expect(await checker.matchesAny('anything', [])).toBe(false);
    expect(await checker.matchesAny('anything', [current])).toBe(false);
  });

  it('keeps the padding a well-formed scrypt hash of the stored cost, so it costs what a real one costs', async () => {
    const [scheme, n, r, p] = PADDING_HASH.split('$');
    const [, realN, realR, realP] = (await hashSecret('x')).split('$');
    expect([scheme, n, r, p]).toEqual(['scrypt', realN, realR, realP]);
    expect(await secretMatches('', PADDING_HASH)).toBe(false);
  });
});
