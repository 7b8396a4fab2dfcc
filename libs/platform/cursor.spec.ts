import { describe, expect, it } from '@jest/globals';
import { decodeCursor, encodeCursor, pageBody, pageWindow, type CursorValue } from './cursor.js';
import { ProblemException } from './problem.js';

const scope = { list: 'tags', filter: { tagName: '%a%', sort: [{ key: 'tagName', descending: false }] } };
const pair = (keys: readonly CursorValue[]): boolean => keys.length === 2 && keys.every((k) => typeof k === 'string');

/** The field errors of a refusal, or the value when there is none. */
function refusal(work: () => unknown): unknown {
  try {
    return work();
  } catch (error) {
    if (!(error instanceof ProblemException)) throw error;
    return { status: error.getStatus(), fields: error.extras.errors?.map((e) => e.field), detail: error.message };
  }
}

describe('cursor codec', () => {
  it('round-trips the last row of a page for the same list, filter and sort', () => {
    const cursor = encodeCursor(scope, ['pii', 'AZNbq1s3dHqQeJ2dn8xv1A'])!;
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor, scope, pair)).toEqual(['pii', 'AZNbq1s3dHqQeJ2dn8xv1A']);
    expect(encodeCursor(scope, undefined)).toBeUndefined();
  });

  it.each([
    ['another list', { ...scope, list: 'schemas' }],
    ['another filter', { ...scope, filter: { ...scope.filter, tagName: '%b%' } }],
    ['another sort', { ...scope, filter: { ...scope.filter, sort: [{ key: 'tagName', descending: true }] } }],
  ])('refuses a cursor made for %s, naming only the field', (_, other) => {
    const cursor = encodeCursor(scope, ['pii', 'x'])!;
    const refused = refusal(() => decodeCursor(cursor, other, pair)) as { detail: string };
    expect(refused).toMatchObject({ status: 400, fields: ['cursor'] });
    expect(refused.detail).not.toContain(cursor);
  });

  it.each([
    ['', 'empty'],
    ['e30', '{}'],
    [Buffer.from('{"v":1,"l":"tags","d":"x","k":[]} ').toString('base64url'), 'trailing text'],
    [Buffer.from([0xff, 0xfe, 0x7b]).toString('base64url'), 'not UTF-8'],
    ['eyJ2IjoxfQ=', 'padding'],
    ['eyJ2IjoxfR', 'non-canonical base64url'],
  ])('refuses %j (%s)', (cursor) => {
    expect(refusal(() => decodeCursor(cursor, scope, pair))).toMatchObject({ status: 400, fields: ['cursor'] });
  });

  it('refuses values the keyset does not accept, and offset with cursor', () => {
    const cursor = encodeCursor(scope, ['pii', 7])!;
    expect(refusal(() => decodeCursor(cursor, scope, pair))).toMatchObject({ status: 400, fields: ['cursor'] });
    const query = { offset: 0, limit: 5, cursor: encodeCursor(scope, ['a', 'b']) };
    expect(refusal(() => pageWindow(query, scope, pair))).toMatchObject({ status: 400, fields: ['cursor'] });
  });

  it('counts on offset pages by default and on cursor pages only with total=true', () => {
    const cursor = encodeCursor(scope, ['a', 'b']);
    expect(pageWindow({ limit: 5 }, scope, pair)).toEqual({ offset: 0, after: undefined, limit: 5, withTotal: true });
    expect(pageWindow({ limit: 5, cursor }, scope, pair)).toMatchObject({ after: ['a', 'b'], withTotal: false });
    expect(pageWindow({ limit: 5, cursor, total: true }, scope, pair).withTotal).toBe(true);
    expect(pageWindow({ limit: 5, offset: 3, total: false }, scope, pair).withTotal).toBe(false);
  });

  it('answers total when counted and next when a match follows', () => {
    const window = pageWindow({ limit: 1 }, scope, pair);
    expect(pageBody(window, scope, { total: 2, next: ['a', 'b'] }, 'tags', [1])).toEqual({
      total: 2,
      tags: [1],
      next: encodeCursor(scope, ['a', 'b']),
    });
    expect(pageBody({ ...window, withTotal: false }, scope, {}, 'tags', [])).toEqual({ tags: [] });
  });
});
