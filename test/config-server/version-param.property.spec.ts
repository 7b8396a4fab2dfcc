import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { assertProperty } from '../support/property.js';
import { call, sqlDuring, startApi, unique, type TestApi } from '../support/api.js';
import { token } from '../support/tokens.js';

/**
 * DESIGN 14 (issue 38, item 4): `version` of rollback and of the history path is 400 unless it is a positive
 * 32-bit integer in plain decimal (docs/decisions.md), never a 5xx, and refused before any SQL.
 */
const RUNS = 600;
const MAX = 2n ** 31n - 1n;

let api: TestApi;
let alice: string;
let q: string;

beforeAll(async () => {
  api = await startApi({ LOG_LEVEL: 'silent' });
  alice = await token({ sub: 'alice', scope: 'portal.admin' });
  // One version, so version 1 exists; rollbacks send a stale If-Match, so version 1 reaches the 412.
  q = `host=${unique('vp')}&serviceId=svc`;
  const put = await call(api, 'PUT', `/config-server/admin/properties?${q}`, {
    token: alice,
    body: { properties: { 'x.a': 1 } },
  });
  expect(put.statusCode).toBe(200);
});
afterAll(async () => {
  await api?.close();
});

/** The oracle: digits without a sign or leading zero, 1..2^31-1. */
const isVersion = (text: string): boolean => /^[1-9]\d*$/.test(text) && BigInt(text) <= MAX;

const digits = fc.stringMatching(/^\d{1,25}$/);
const nearLimits = fc.oneof(
  fc.bigInt({ min: MAX - 3n, max: MAX + 3n }),
  fc.bigInt({ min: 2n ** 32n - 3n, max: 2n ** 32n + 3n }),
  fc.bigInt({ min: -3n, max: 3n }),
);
const numbers = fc.oneof(
  nearLimits.map(String),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
  fc.integer({ min: 1, max: 50 }).map(String),
  fc.tuple(digits, digits).map(([whole, fraction]) => `${whole}.${fraction}`),
  fc
    .tuple(fc.integer({ min: 0, max: 99 }), fc.constantFrom('e', 'E', 'e+', 'e-'), fc.integer({ min: 0, max: 20 }))
    .map(([mantissa, e, exponent]) => `${mantissa}${e}${exponent}`),
  fc
    .tuple(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 0, max: 2 ** 31 }))
    .map(([n, v]) => `${'0'.repeat(n)}${v}`),
  fc.constantFrom('0x10', '0b1', '0o7', 'Infinity', '-Infinity', 'NaN', '1_000', '١', '１', '-0', '+0', '.5', '5.'),
  fc.string({ unit: fc.constantFrom(...'0123456789+-.eExX _'), minLength: 1, maxLength: 14 }),
);
// Mostly nothing, so the plain numbers near the limits come through often.
const pad = fc.oneof(
  { weight: 6, arbitrary: fc.constant('') },
  { weight: 4, arbitrary: fc.constantFrom(' ', '\t', '\n', '\r\n', '\u00a0', '\u0000', '+', '-', '0') },
);
/** Version strings: numbers of every kind, sometimes with a sign, space, a leading zero or a control character. */
const versionText = fc
  .tuple(pad, numbers, pad)
  .map(([before, text, after]) => `${before}${text}${after}`)
  .filter((text) => text !== '');

/** Encoded so a dot stays a character of the value, never a path segment. */
const encode = (text: string): string => encodeURIComponent(text).replace(/\./g, '%2E');

async function send(kind: 'rollback' | 'history', text: string) {
  const url =
    kind === 'rollback'
      ? `/config-server/admin/rollback?${q}&version=${encode(text)}`
      : `/config-server/admin/history/${encode(text)}?${q}`;
  return sqlDuring(() =>
    call(api, kind === 'rollback' ? 'POST' : 'GET', url, { token: alice, headers: { 'if-match': 'W/"0"' } }),
  );
}

describe('version parameter (property, real api)', () => {
  it(`never a 5xx; 400 naming version, before any SQL, unless a positive 32-bit integer (${RUNS} runs)`, async () => {
    let refused = 0;
    await assertProperty(
      'version parameter',
      fc.asyncProperty(versionText, fc.constantFrom('rollback' as const, 'history' as const), async (text, kind) => {
        // A URL parser resolves a `.` or `..` segment, even encoded (%2E), so no client can send it as a value.
        fc.pre(kind === 'rollback' || (text !== '.' && text !== '..'));
        const { result, queries } = await send(kind, text);
        const label = JSON.stringify([kind, text]);
        expect([label, result.statusCode < 500]).toEqual([label, true]);
        if (!isVersion(text)) {
          refused += 1;
          expect([label, result.statusCode]).toEqual([label, 400]);
          expect(result.headers['content-type']).toContain('application/problem+json');
          expect(result.json<{ errors: { field: string }[] }>().errors.map((e) => e.field)).toContain('version');
          expect([label, queries]).toEqual([label, 0]);
        } else {
          // A valid version gets past validation: version 1 exists (rollback: then the stale If-Match, 412;
          // history: its content), any other is 404, before the If-Match is judged (DESIGN 3: 404 before 412).
          const exists = BigInt(text) === 1n;
          const expected = kind === 'rollback' ? (exists ? 412 : 404) : exists ? 200 : 404;
          expect([label, result.statusCode]).toEqual([label, expected]);
        }
      }),
      RUNS,
    );
    expect(refused).toBeGreaterThan(RUNS / 2);
    const history = await call(api, 'GET', `/config-server/admin/history?${q}`, { token: alice });
    expect(history.json<{ total: number }>().total).toBe(1);
  });

  it.each([
    ['1', 412, 200],
    ['2147483647', 404, 404],
    ['2147483648', 400, 400],
    ['01', 400, 400],
    [' 1', 400, 400],
    ['1e0', 400, 400],
    ['1.0', 400, 400],
    ['-1', 400, 400],
    ['0', 400, 400],
  ])('%s: rollback %i, history %i', async (text, rollback, history) => {
    expect((await send('rollback', text)).result.statusCode).toBe(rollback);
    expect((await send('history', text)).result.statusCode).toBe(history);
  });
});
