import { describe, expect, it } from '@jest/globals';
import { ProblemException } from '#platform';
import { principalOf } from '#token-binding';
import { visibleRow, writableRow } from './access-checks.js';

const admin = principalOf({ sub: 'root', scope: 'portal.admin' });
const hostA = principalOf({ sub: 'a', scope: 'portal.w', host: 'host-a' });
const TAG = { kind: 'tag', idField: 'tagId' };
const SCHEMA = { kind: 'schema', idField: 'schemaId' };

/** The status and detail an access check answers, or 'ok'. */
function outcome(check: () => unknown): string {
  try {
    check();
    return 'ok';
  } catch (error) {
    if (!(error instanceof ProblemException)) throw error;
    return `${error.getStatus()} ${String(error.message)}`;
  }
}

const row = (hostId: string | null, aggregateVersion = 3) => ({ hostId, aggregateVersion });

describe('writableRow', () => {
  it.each([
    ['a missing row is 404', hostA, TAG, null, undefined, '404 No tag with tagId t1'],
    [
      "another host's row is 404, before write access or the version",
      hostA,
      SCHEMA,
      row('host-b'),
      { versions: [9] },
      '404 No schema with schemaId t1',
    ],
    [
      'a global row without portal.admin is 403, before the version',
      hostA,
      TAG,
      row(null),
      { versions: [9] },
      '403 Writing a global tag needs the capability tags:admin (or the scope portal.admin)',
    ],
    [
      'a stale If-Match is 412',
      hostA,
      SCHEMA,
      row('host-a'),
      { versions: [2] },
      '412 schema t1 is at version 3, not the one in If-Match',
    ],
    ['a matching If-Match passes', hostA, TAG, row('host-a'), { versions: [2, 3] }, 'ok'],
    ['If-Match * passes', admin, TAG, row('host-b'), { any: true as const }, 'ok'],
    ['no If-Match passes', admin, SCHEMA, row(null), undefined, 'ok'],
  ])('%s', (_, principal, name, found, condition, expected) => {
    expect(outcome(() => writableRow(principal, name, 't1', found, condition))).toBe(expected);
  });
});

describe('visibleRow', () => {
  it.each([
    ['a global row is visible to every reader', hostA, row(null), 'ok'],
    ["its own host's row is visible", hostA, row('host-a'), 'ok'],
    ["another host's row reads as missing", hostA, row('host-b'), '404 No tag with tagId t1'],
    ["an admin sees another host's row", admin, row('host-b'), 'ok'],
  ])('%s', (_, principal, found, expected) => {
    expect(outcome(() => visibleRow(principal, TAG, 't1', found))).toBe(expected);
  });
});
