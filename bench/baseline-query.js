// How a baseline sends its one statement: unnamed, as pg does by default (the headline rows), or with
// BASELINE_NAMED=1 named, as Bindery names its own on a direct connection, so pg parses it once per
// connection and PostgreSQL plans it once per session (the "naming its statement too" rows).
import pg from 'pg';

const NAMED = process.env.BASELINE_NAMED === '1';

export function query(pool, text, values) {
  if (!NAMED) return pool.query(text, values);
  // Named after construction: a config object is copied by pg on every call (as Bindery avoids too).
  const named = new pg.Query(text, values);
  named.name = 'baseline_statement';
  return pool.query(named);
}
