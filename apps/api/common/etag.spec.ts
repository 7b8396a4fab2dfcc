import { describe, expect, it } from '@jest/globals';
import { ProblemException } from '#platform';
import { parseIfMatch, versionMatches } from './etag.js';

/** The status parseIfMatch answers for a header, or the condition it reads. */
function parsed(header: string | undefined): unknown {
  try {
    return parseIfMatch(header);
  } catch (error) {
    if (!(error instanceof ProblemException)) throw error;
    return error.getStatus();
  }
}

describe('parseIfMatch (RFC 9110 13.1.1: 400 only for a malformed header)', () => {
  it.each([
    ['absent', undefined, undefined],
    ['blank', '  ', undefined],
    ['only empty list members', ' , ,', undefined],
    ['*', ' * ', { any: true }],
    ['a weak tag', 'W/"3"', { versions: [3] }],
    ['a strong tag', '"3"', { versions: [3] }],
    ['a list with spaces and empty members', ', W/"1" ,,"2",\t', { versions: [1, 2] }],
    ['version 0 (a layer never written)', 'W/"0"', { versions: [0] }],
    // Well-formed tags that name no version as etagOf spells it: they match nothing, so the answer is 412.
    ['a word', '"abc"', { versions: [] }],
    ['leading zeros', 'W/"007"', { versions: [] }],
    ['a number beyond 32 bits', 'W/"99999999999"', { versions: [] }],
    ['a sign', '"-1"', { versions: [] }],
    ['an empty tag', '""', { versions: [] }],
    ['a comma inside a tag', '"1,2"', { versions: [] }],
    ['obs-text', '"\u00e9"', { versions: [] }],
    ['a word beside a version', '"abc", W/"4"', { versions: [4] }],
    // Malformed: 400.
    ['an unquoted version', '3', 400],
    ['a lowercase weak prefix', 'w/"3"', 400],
    ['a space inside a tag', '"1 2"', 400],
    ['a quote inside a tag', '"1"2"', 400],
    ['an unterminated tag', '"3', 400],
    ['two tags without a comma', '"1" "2"', 400],
    ['* inside a list', '*, "1"', 400],
    ['a character above obs-text', '"\u0100"', 400],
  ])('%s', (_name, header, expected) => {
    expect(parsed(header)).toEqual(expected);
  });
});

describe('versionMatches', () => {
  it('matches an absent condition, *, and a list naming the version; nothing else', () => {
    expect(versionMatches(undefined, 5)).toBe(true);
    expect(versionMatches({ any: true }, 5)).toBe(true);
    expect(versionMatches(parseIfMatch('"4", W/"5"'), 5)).toBe(true);
    expect(versionMatches(parseIfMatch('W/"05"'), 5)).toBe(false);
    expect(versionMatches(parseIfMatch('"abc"'), 5)).toBe(false);
  });
});
