import type { DataSource } from 'typeorm';

/** Tag rows for the cursor paging specs (DESIGN 4.2), written straight to the table. */
export interface Row {
  readonly id: string;
  readonly name: string;
  readonly desc: string | null;
  readonly ts: string;
  readonly host?: string | null;
}

/** Times that differ by a microsecond: a cursor that kept milliseconds only would skip or repeat rows. */
export const TIMES = ['2026-01-01T00:00:00.000001Z', '2026-01-01T00:00:00.000002Z', '2026-01-01T00:00:01Z'];
export const WORDS = ['alpha', 'Alpha', 'beta', 'BETA', 'Ärger', 'zulu', '_under', '-dash'];
export const DESCS = [null, 'same', 'Same', 'other', null, 'same', '', 'Zed'];

export async function insertTags(db: DataSource, rows: readonly Row[]): Promise<void> {
  await db.query(
    `insert into tag (tag_id, tag_name, tag_desc, update_ts, host_id, aggregate_version)
     select i, n, d, t, h, 1 from unnest($1::varchar[], $2::varchar[], $3::varchar[], $4::timestamptz[], $5::varchar[])
       as u(i, n, d, t, h)`,
    [
      rows.map((r) => r.id),
      rows.map((r) => r.name),
      rows.map((r) => r.desc),
      rows.map((r) => r.ts),
      rows.map((r) => r.host ?? null),
    ],
  );
}

/** `count` rows under `prefix`: mixed case, equal and NULL descriptions, equal times, `-` and `_` in ids. */
export function rowsOf(prefix: string, count: number): Row[] {
  const short = prefix.slice(-8);
  return Array.from({ length: count }, (_, i) => ({
    id: `${short}${i % 2 === 0 ? '-' : '_'}${i}`,
    name: `${prefix} ${WORDS[i % WORDS.length]} ${i}`,
    desc: DESCS[i % DESCS.length] ?? null,
    ts: TIMES[i % TIMES.length] ?? TIMES[0],
  }));
}

export const ids = (items: readonly unknown[]): string[] => items.map((t) => (t as { tagId: string }).tagId);
export const names = (items: readonly unknown[]): string[] => items.map((t) => (t as { tagName: string }).tagName);
