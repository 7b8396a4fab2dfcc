import type { CursorValue, PageWindow } from '#platform';

/**
 * Keyset paging (DESIGN 4.2): a page starts after the last row of the page before, named by its sort values
 * and its unique id, with a `WHERE` that PostgreSQL evaluates under the same ORDER BY, collation and NULL
 * placement, so the next page costs what the first one does and rows written meanwhile are never seen twice.
 */

/** How a sort value travels: as text, timestamps with microseconds (a JS Date would drop them). */
export type KeyType = 'text' | 'timestamp' | 'integer' | 'bigint';

/** Where a page starts, how many rows it has, and whether it counts every match (DESIGN 4.2). */
export type { PageWindow };

/** One sort value of a row as a cursor carries it. */
export type KeyValue = CursorValue;

/** One column of a list's ORDER BY. */
export interface KeyColumn {
  /** The expression exactly as the ORDER BY sorts it (`lower(t.tag_name)`, `t.tag_id`). */
  readonly sql: string;
  readonly type: KeyType;
  readonly descending?: boolean;
  /** The column may be NULL: its NULLs sort last ascending and first descending, unless `nulls` says otherwise. */
  readonly nullable?: boolean;
  /** Where NULLs sort when that differs from PostgreSQL's default (spelt out in the ORDER BY). */
  readonly nulls?: 'first' | 'last';
}

/** Rows of a keyset page read as one index range: its condition and the ORDER BY that reads it in index order. */
export interface KeysetBranch {
  readonly where: string;
  readonly orderBy: string;
}

/** One page: its rows, the total when asked for, and the last row's keys when a match follows it. */
export interface KeysetPage<T> {
  readonly rows: T[];
  readonly total?: number;
  readonly next?: KeyValue[];
}

const SQL_TYPES: Readonly<Record<KeyType, string>> = {
  text: 'text',
  timestamp: 'timestamptz',
  integer: 'integer',
  bigint: 'bigint',
};

/** Longest text value a cursor may carry: the longest sorted column is 1024 characters (lower() may grow it). */
const MAX_TEXT = 4096;
const ISO_MICROS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const INT32 = 2 ** 31;
const INT64 = 2n ** 63n;

/** A time PostgreSQL takes: round-tripped through Date, so 02-30 or 24:00 is refused here; year 0 does not exist. */
function realTime(value: string): boolean {
  const iso = `${value.slice(0, 23)}Z`;
  return !value.startsWith('0000') && !Number.isNaN(Date.parse(iso)) && new Date(iso).toISOString() === iso;
}

function validValue(column: KeyColumn, value: unknown): boolean {
  if (value === null) return column.nullable === true;
  switch (column.type) {
    case 'text':
      return typeof value === 'string' && value.length <= MAX_TEXT && !value.includes('\0') && value.isWellFormed();
    case 'timestamp':
      return typeof value === 'string' && ISO_MICROS.test(value) && realTime(value);
    case 'integer':
      return Number.isSafeInteger(value) && (value as number) >= -INT32 && (value as number) < INT32;
    case 'bigint':
      return (
        typeof value === 'string' && /^-?\d{1,19}$/.test(value) && BigInt(value) >= -INT64 && BigInt(value) < INT64
      );
  }
}

/**
 * The ORDER BY of one list with its unique id last, and the statement parts of keyset paging over it. Every
 * comparison is SQL's own (the column's collation, NULL placement, direction): nothing is compared in JS.
 */
export class Keyset {
  constructor(readonly columns: readonly KeyColumn[]) {}

  private nullsFirst(column: KeyColumn): boolean {
    return column.nulls === undefined ? column.descending === true : column.nulls === 'first';
  }

  /** One ORDER BY item per column (NULL placement spelt only where it differs from PostgreSQL's default). */
  orderItems(): { sql: string; direction: 'ASC' | 'DESC'; nulls?: 'NULLS FIRST' | 'NULLS LAST' }[] {
    return this.columns.map((column) => {
      const direction = column.descending === true ? 'DESC' : 'ASC';
      if (column.nulls === undefined) return { sql: column.sql, direction };
      return { sql: column.sql, direction, nulls: column.nulls === 'first' ? 'NULLS FIRST' : 'NULLS LAST' };
    });
  }

  orderBy(): string {
    return this.orderItems()
      .map(({ sql, direction, nulls }) => `${sql} ${direction.toLowerCase()}${nulls ? ` ${nulls.toLowerCase()}` : ''}`)
      .join(', ');
  }

  /** The select list of the sort values, `k0`, `k1`...: timestamps as UTC text to the microsecond. */
  select(): string {
    return this.columns.map((column, i) => `${this.valueOf(column)} as "k${i}"`).join(', ');
  }

  /** The select items of `select()` one by one, for a query builder (parenthesised: never read as a property). */
  selectItems(): { sql: string; alias: string }[] {
    return this.columns.map((column, i) => ({ sql: `(${this.valueOf(column)})`, alias: `k${i}` }));
  }

  private valueOf(column: KeyColumn): string {
    return column.type === 'timestamp'
      ? `to_char(${column.sql} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
      : column.sql;
  }

  /** The sort values of a row read with `select()`. */
  keysOf(row: object): KeyValue[] {
    return this.columns.map((_, i) => {
      const value: unknown = Reflect.get(row, `k${i}`);
      return typeof value === 'string' || typeof value === 'number' ? value : null;
    });
  }

  /** Whether `values` are a row's sort values under this keyset: one per column, each of the column's kind. */
  readonly accepts = (values: readonly unknown[]): values is KeyValue[] =>
    values.length === this.columns.length && this.columns.every((column, i) => validValue(column, values[i]));

  /**
   * The condition "comes after the row with `values`" under the ORDER BY; `bind` gives a value's placeholder.
   * Same-direction keys that are never NULL compare as one row `(a, b) > ($1, $2)`, which an index matching the
   * ORDER BY serves as a range; otherwise `a > $1 or (a = $1 and (b > $2 or ...))`, NULL-aware.
   */
  after(values: readonly KeyValue[], bind: (value: KeyValue) => string): string {
    if (!this.accepts(values)) throw new Error('keyset values do not match the keyset');
    const params = values.map((value, i) =>
      value === null ? null : `cast(${bind(value)} as ${SQL_TYPES[this.columns[i]?.type ?? 'text']})`,
    );
    const descending = this.columns[0]?.descending === true;
    const uniform = this.columns.every((c) => c.nullable !== true && (c.descending === true) === descending);
    if (uniform) {
      return `(${this.columns.map((c) => c.sql).join(', ')}) ${descending ? '<' : '>'} (${params.join(', ')})`;
    }
    let condition = 'false';
    for (let i = this.columns.length - 1; i >= 0; i -= 1) {
      const column = this.columns[i];
      if (column === undefined) continue;
      const { later, same } = this.compare(column, params[i] ?? null);
      condition = i === this.columns.length - 1 ? later : `(${later} or (${same} and ${condition}))`;
    }
    // A bound on the first key lets an index on it start the scan there instead of at the list's beginning.
    const first = this.columns[0];
    const lead = params[0];
    if (first === undefined || first.nullable === true || lead === undefined || lead === null) return condition;
    return `(${first.sql} ${first.descending === true ? '<=' : '>='} ${lead} and ${condition})`;
  }

  /**
   * `after()` as disjoint branches in the order their rows sort, each one index range under an index on the
   * ORDER BY's columns: on a nullable first key `after()` is an OR with `is null` that no range serves, so pages
   * deep in the list scanned from its start. One branch is a plain `WHERE` and `ORDER BY`; more are read each
   * with its own `order by ... limit n`, combined with `union all` and sorted again by `orderBy()`.
   */
  afterBranches(values: readonly KeyValue[], bind: (value: KeyValue) => string): KeysetBranch[] {
    const [first, ...rest] = this.columns;
    if (first?.nullable !== true) return [{ where: this.after(values, bind), orderBy: this.orderBy() }];
    if (!this.accepts(values)) throw new Error('keyset values do not match the keyset');
    const nullsFirst = this.nullsFirst(first);
    const nullOrder = this.nullGroupOrder();
    const isNull = { where: `${first.sql} is null`, orderBy: nullOrder };
    if (values[0] !== null) {
      // The non-null rows after the cursor: comparing with a value leaves the NULLs out of the range.
      const range = new Keyset([{ ...first, nullable: false }, ...rest]).after(values, bind);
      const beyond = { where: range, orderBy: this.orderBy() };
      return nullsFirst ? [beyond] : [beyond, isNull];
    }
    const tail = rest.length === 0 ? 'false' : new Keyset(rest).after(values.slice(1), bind);
    const nulls = { where: `(${isNull.where} and ${tail})`, orderBy: nullOrder };
    return nullsFirst ? [nulls, { where: `${first.sql} is not null`, orderBy: this.orderBy() }] : [nulls];
  }

  /**
   * A first page as branches, like `afterBranches`: empty (one plain read) unless the first key is nullable
   * with its NULLs first, whose group an index on the ORDER BY holds in the next key's order only read the
   * other way (`-tagDesc`: every NULL row was sorted before the first 20 came out).
   */
  startBranches(): KeysetBranch[] {
    const [first] = this.columns;
    if (first?.nullable !== true || !this.nullsFirst(first)) return [];
    const nullOrder = this.nullGroupOrder();
    return [
      { where: `${first.sql} is null`, orderBy: nullOrder },
      { where: `${first.sql} is not null`, orderBy: this.orderBy() },
    ];
  }

  /** All NULL in the group, the first key may sort either way: the next key's way, which an index reads in one pass. */
  private nullGroupOrder(): string {
    const [first, ...rest] = this.columns;
    if (first === undefined) return '';
    return new Keyset([{ ...first, descending: rest[0]?.descending, nulls: undefined }, ...rest]).orderBy();
  }

  /** Rows strictly after `param` in this column's order (`later`) and rows equal to it (`same`). */
  private compare(column: KeyColumn, param: string | null): { later: string; same: string } {
    const nullable = column.nullable === true;
    const nullsFirst = this.nullsFirst(column);
    if (param === null)
      return { later: nullsFirst ? `${column.sql} is not null` : 'false', same: `${column.sql} is null` };
    const beyond = `${column.sql} ${column.descending === true ? '<' : '>'} ${param}`;
    return {
      later: nullable && !nullsFirst ? `(${beyond} or ${column.sql} is null)` : beyond,
      same: `${column.sql} = ${param}`,
    };
  }

  /**
   * A page read with `limit + 1` rows: its rows, and its last row's keys when the extra row came (a match
   * follows). `keysRow` gives the row holding `k0`... when that is not the row itself (an entity and its raw row).
   */
  pageOf<T extends object>(
    rows: readonly T[],
    limit: number,
    keysRow: (row: T, index: number) => object = (row) => row,
  ): { rows: T[]; next?: KeyValue[] } {
    if (rows.length <= limit) return { rows: [...rows] };
    const page = rows.slice(0, limit);
    const last = page[limit - 1];
    return last === undefined ? { rows: page } : { rows: page, next: this.keysOf(keysRow(last, limit - 1)) };
  }
}

/** A `bind` for query builders: each value becomes a named parameter (`:after0`...) of `parameters`. */
export function namedParameters(parameters: Record<string, unknown>): (value: KeyValue) => string {
  return (value) => {
    const name = `after${Object.keys(parameters).length}`;
    parameters[name] = value;
    return `:${name}`;
  };
}

/** `columns` with `id` appended unless the sort already names it: the unique id makes every position distinct. */
export function withTieBreaker(columns: readonly KeyColumn[], id: KeyColumn): Keyset {
  return new Keyset(columns.some((c) => c.sql === id.sql) ? columns : [...columns, id]);
}
