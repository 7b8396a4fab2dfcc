import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import pg from 'pg';
import { parseTimestamptz } from '#database';
import { isoTime } from '#platform';
import { assertProperty } from '../support/property.js';

/**
 * Bindery parses timestamptz text and writes ISO strings itself for speed (docs/performance.md); pg's parser
 * (postgres-date) and `Date.prototype.toISOString` stay the definitions. Differential, on PostgreSQL's own text.
 */
describe('timestamps (property, differential against pg and V8)', () => {
  const pgParse = pg.types.getTypeParser(1184, 'text') as (text: string) => unknown;
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: process.env.DATABASE_SESSION_URL || process.env.DATABASE_URL });
    await client.connect();
  });
  afterAll(() => client.end());

  // Microseconds since 1970 across years 0001..9999 and beyond 10000, and the time zones a server may run in.
  const micros = fc.oneof(
    fc.bigInt({ min: -62_135_596_800_000_000n, max: 253_402_300_799_999_999n }),
    fc.bigInt({ min: 253_402_300_800_000_000n, max: 9_000_000_000_000_000_000n }),
    fc.bigInt({ min: -1_000_000_000n, max: 1_000_000_000n }),
  );
  const zones = fc.constantFrom(
    'UTC',
    'Etc/UTC',
    'Europe/Paris',
    'Asia/Kolkata',
    'America/St_Johns',
    'Pacific/Chatham',
  );

  it('parses every timestamptz PostgreSQL writes to the Date pg would make', async () => {
    await assertProperty(
      'timestamptz parsing',
      fc.asyncProperty(fc.array(micros, { minLength: 1, maxLength: 40 }), zones, async (values, zone) => {
        await client.query(`select set_config('TimeZone', $1, false)`, [zone]);
        const { rows } = await client.query<{ text: string }>({
          // Text as the server writes it; seconds = micros / 1e6 exactly, as numeric.
          text: `select (to_timestamp(0) + (v::text || ' microseconds')::interval)::text as text from unnest($1::int8[]) v`,
          values: [values.map(String)],
        });
        for (const { text } of rows) {
          const mine = parseTimestamptz(text);
          const theirs = pgParse(text);
          expect([text, mine instanceof Date ? mine.getTime() : mine]).toEqual([
            text,
            theirs instanceof Date ? theirs.getTime() : theirs,
          ]);
        }
      }),
      150,
    );
    // The literals a server never writes in UTC still go to pg's parser: infinity, BC, other offsets.
    for (const text of [
      'infinity',
      '-infinity',
      '0044-03-15 12:00:00+00 BC',
      '2026-11-26 20:30:00.5+01',
      '2026-11-26 19:30:00.+00',
    ]) {
      expect(String(parseTimestamptz(text))).toBe(String(pgParse(text)));
    }
  });

  it('writes for every Date the string toISOString writes (or throws as it does)', async () => {
    const dates = fc.oneof(
      fc.date({ noInvalidDate: true }),
      fc.integer({ min: -8.64e15, max: 8.64e15 }).map((ms) => new Date(ms)),
      fc.integer({ min: -30_610_224_000_000, max: 253_402_300_799_999 }).map((ms) => new Date(ms)),
      fc.constant(new Date(Number.NaN)),
    );
    const outcome = (write: () => string): string => {
      try {
        return write();
      } catch (error) {
        return `threw ${(error as Error).name}`;
      }
    };
    await assertProperty(
      'ISO time',
      fc.property(dates, (date) => {
        expect(outcome(() => isoTime(date))).toBe(outcome(() => date.toISOString()));
      }),
      5000,
    );
    // Every value of each padded field, and the years where the form changes, exhaustively.
    const base = Date.UTC(2026, 0, 1);
    const exhaustive = [
      ...Array.from({ length: 1000 }, (_, ms) => base + ms),
      ...Array.from({ length: 60 }, (_, n) => base + n * 1000 + n * 60_000),
      ...Array.from({ length: 24 }, (_, h) => base + h * 3_600_000),
      ...Array.from({ length: 12 }, (_, m) => Date.UTC(2026, m, 31)),
      ...[-1, 999, 1000, 9999, 10000].map((year) => Date.UTC(year, 11, 31, 23, 59, 59, 999)),
      ...[1000, 10000].map((year) => Date.UTC(year, 0, 1)),
    ];
    for (const ms of exhaustive) expect(isoTime(new Date(ms))).toBe(new Date(ms).toISOString());
  });
});
