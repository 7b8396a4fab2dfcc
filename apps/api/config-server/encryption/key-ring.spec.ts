import { describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { inspect } from 'node:util';
import { KeyRing, KeyRingError, parseKeyRing } from './index.js';

const keyA = randomBytes(32);
const keyB = randomBytes(32);
const textA = keyA.toString('base64');
const textB = keyB.toString('base64');

/** The KeyRingError `fn` throws; fails the test when it throws something else or nothing. */
function refusal(fn: () => unknown): KeyRingError {
  try {
    fn();
  } catch (error) {
    if (error instanceof KeyRingError) return error;
    throw error;
  }
  throw new Error('expected a KeyRingError');
}

/** Every way the key text could show up in a message: whole, base64 fragments, hex. */
function expectNoKeyMaterial(message: string, keyText: string): void {
  expect(message).not.toContain(keyText);
  for (let at = 0; at + 8 <= keyText.length; at += 4) expect(message).not.toContain(keyText.slice(at, at + 8));
  expect(message).not.toContain(Buffer.from(keyText, 'base64').toString('hex').slice(0, 16));
}

describe('parseKeyRing', () => {
  it('reads kid: base64 lines in order, the first active, past comments, blank lines, CRLF and spaces', () => {
    const ring = parseKeyRing(
      `\uFEFF# Bindery key ring\r\n\r\n  # rotated 2025-01\n2025-02.b :  ${textB}  \r\nold_A:${textA}\n\n`,
    );
    expect(ring.kids).toEqual(['2025-02.b', 'old_A']);
    expect(ring.active.kid).toBe('2025-02.b');
    expect(ring.active.key.equals(keyB)).toBe(true);
    expect(ring.get('old_A')?.equals(keyA)).toBe(true);
    expect(ring.get('missing')).toBeUndefined();
  });

  it('accepts a kid of 64 characters from the whole alphabet', () => {
    const kid = 'Az09._-'.repeat(9).slice(0, 64);
    expect(parseKeyRing(`${kid}: ${textA}`).kids).toEqual([kid]);
  });

  const short = randomBytes(31).toString('base64');
  const long = randomBytes(33).toString('base64');
  // 32 bytes whose last character carries bits base64 must leave zero: Buffer.from would silently drop them.
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const nonCanonical = `${textA.slice(0, 42)}${alphabet[alphabet.indexOf(textA[42]) + 1]}=`;
  const cases: [string, string, string, RegExp][] = [
    ['a line without a colon', `# first\n\n${textA}`, textA, /line 3: expected "kid: base64 key"/],
    ['a kid with a space', `# c\nmy key: ${textA}`, textA, /line 2: the kid must match/],
    ['an empty kid', `: ${textA}`, textA, /line 1: the kid must match/],
    ['a kid of 65 characters', `${'k'.repeat(65)}: ${textA}`, textA, /line 1: the kid must match/],
    ['a key of 31 bytes', `a: ${textA}\nb: ${short}`, short, /line 2: the key of "b" is not base64 of 32 bytes/],
    ['a key of 33 bytes', `a: ${long}`, long, /line 1: the key of "a" is not base64 of 32 bytes/],
    ['base64 without padding', `a: ${textA.slice(0, 43)}`, textA.slice(0, 43), /line 1: the key of "a"/],
    ['base64url', `a: ${textA.replace(/\+/g, '-').replace(/\//g, '_')}x`, textA, /line 1: the key of "a"/],
    ['non-canonical last bits', `a: ${nonCanonical}`, nonCanonical, /line 1: the key of "a"/],
    ['a trailing comment', `a: ${textA} # main`, textA, /line 1: the key of "a"/],
    ['an empty key', `a:`, '', /line 1: the key of "a"/],
    ['a duplicate kid', `a: ${textA}\n#\nb: ${textB}\na: ${textB}`, textB, /line 4: kid "a" is already on line 1/],
  ];
  it.each(cases)('refuses %s, naming the line and never the key', (_name, text, keyText, message) => {
    const error = refusal(() => parseKeyRing(text));
    expect(error.message).toMatch(message);
    if (keyText !== '') expectNoKeyMaterial(error.message, keyText);
    expectNoKeyMaterial(error.message, textA);
  });

  it.each([
    ['an empty file', ''],
    ['only comments and blank lines', '# nothing yet\n\n   \n# still nothing\n'],
  ])('refuses %s: at least one key', (_name, text) => {
    expect(refusal(() => parseKeyRing(text)).message).toMatch(/holds no key/);
  });
});

describe('KeyRing', () => {
  const ring = new KeyRing([
    ['main', keyA],
    ['old', keyB],
  ]);
  const shown = [
    inspect(ring),
    inspect(ring, { depth: 10, getters: true }),
    inspect({ nested: { ring } }, { depth: 10 }),
    inspect(ring.active, { depth: 10, getters: true }),
    JSON.stringify(ring),
    JSON.stringify({ ring, active: ring.active }),
    String(ring.kids),
  ];

  it.each(shown.map((text, i): [number, string] => [i, text]))(
    'printing or stringifying it shows kids, never key bytes (%i)',
    (_i, text) => {
      for (const key of [keyA, keyB]) {
        expectNoKeyMaterial(text, key.toString('base64'));
        expect(text).not.toContain(key.toString('hex').slice(0, 16));
        expect(text).not.toMatch(/<Buffer/);
      }
      expect(text).toContain('main');
    },
  );

  it('serialises as its kids and the active one', () => {
    expect(JSON.parse(JSON.stringify(ring))).toEqual({ active: 'main', kids: ['main', 'old'] });
    expect(JSON.parse(JSON.stringify(ring.active))).toEqual({ kid: 'main' });
  });

  it('keeps its own copy of the keys', () => {
    const key = Buffer.from(keyA);
    const own = new KeyRing([['k', key]]);
    key.fill(0);
    expect(own.get('k')?.equals(keyA)).toBe(true);
  });

  it('refuses no keys, a bad kid, a wrong size and a duplicate', () => {
    expect(() => new KeyRing([])).toThrow(KeyRingError);
    expect(() => new KeyRing([['a b', keyA]])).toThrow(KeyRingError);
    expect(() => new KeyRing([['a', keyA.subarray(1)]])).toThrow(KeyRingError);
    expect(
      () =>
        new KeyRing([
          ['a', keyA],
          ['a', keyB],
        ]),
    ).toThrow(/twice/);
  });
});
