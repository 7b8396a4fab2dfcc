import pg from 'pg';

const TIMESTAMPTZ = 1184;

const digit = (text: string, at: number): number => {
  const d = text.charCodeAt(at) - 48;
  return d >= 0 && d <= 9 ? d : NaN;
};
const number = (text: string, at: number, length: number): number => {
  let n = 0;
  for (let i = at; i < at + length; i += 1) n = n * 10 + digit(text, i);
  return n;
};
const isAt = (text: string, at: number, char: number): boolean => text.charCodeAt(at) === char;
const [DASH, SPACE, COLON, DOT] = ['-', ' ', ':', '.'].map((c) => c.charCodeAt(0)) as [number, number, number, number];

/**
 * A timestamptz as PostgreSQL writes it in UTC (`2026-11-26 19:30:12.345678+00`), parsed as pg's parser
 * (postgres-date) would, without its regular expressions (about 1 µs a value, paid per row of a page:
 * bench peer). Any other form (another offset, years outside 1000..9999, BC, infinity) goes to pg's parser.
 */
export function parseTimestamptz(text: string): Date {
  const end = text.length - 3;
  const fast =
    text.length >= 22 &&
    text.length <= 29 &&
    text.endsWith('+00') &&
    isAt(text, 4, DASH) &&
    isAt(text, 7, DASH) &&
    isAt(text, 10, SPACE) &&
    isAt(text, 13, COLON) &&
    isAt(text, 16, COLON) &&
    (end === 19 || (end >= 21 && isAt(text, 19, DOT)));
  if (fast) {
    const year = number(text, 0, 4);
    // The fraction as postgres-date reads it (1000 × parseFloat), so the milliseconds truncate alike.
    const ms = end === 19 ? 0 : number(text, 20, end - 20) >= 0 ? 1000 * Number(text.slice(19, end)) : NaN;
    const time = Date.UTC(
      year,
      number(text, 5, 2) - 1,
      number(text, 8, 2),
      number(text, 11, 2),
      number(text, 14, 2),
      number(text, 17, 2),
      ms,
    );
    if (year >= 1000 && !Number.isNaN(time)) return new Date(time);
  }
  return (pg.types.getTypeParser(TIMESTAMPTZ, 'text') as (value: string) => Date)(text);
}

/** pg's type parsers, timestamptz's replaced by `parseTimestamptz` (the pool's `types`). */
export const PG_TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary'): unknown {
    return oid === TIMESTAMPTZ && format !== 'binary' ? parseTimestamptz : pg.types.getTypeParser(oid, format);
  },
};
