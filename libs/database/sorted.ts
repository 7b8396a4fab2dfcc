/** Code-unit order, so the order never depends on a database collation or locale. */
export const compareKeys = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export function sortedRecord<T>(entries: Iterable<readonly [string, T]>): Record<string, T> {
  const sorted = [...entries].sort(([a], [b]) => compareKeys(a, b));
  const record: Record<string, T> = {};
  // defineProperty: a name such as `__proto__` stays an own key instead of reaching the prototype.
  for (const [key, value] of sorted)
    Object.defineProperty(record, key, { value, enumerable: true, writable: true, configurable: true });
  return record;
}
