// How a baseline sends its one statement: unnamed, as pg does by default (the headline rows), or with
// BASELINE_NAMED=1 named, as Bindery names its own on a direct connection, so pg parses it once per
// connection and PostgreSQL plans it once per session (the "naming its statement too" rows).
const NAMED = process.env.BASELINE_NAMED === '1';

export function query(pool, text, values) {
  if (!NAMED) return pool.query(text, values);
  // pg's documented query config, as Bindery's database layer sends it (pg copies it on every call, both sides).
  return pool.query({ name: 'baseline_statement', text, values });
}
