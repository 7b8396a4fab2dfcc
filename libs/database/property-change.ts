import type { LayerChange } from './entities/config-layer-version.entity.js';
import type { JsonValue } from './entities/config-types.js';
import { compareKeys } from './sorted.js';

/** jsonb equality: objects by their keys whatever the order, arrays in order, numbers by value. */
export function sameJson(a: JsonValue, b: JsonValue): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => sameJson(item, b[i]));
  }
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && sameJson(a[key], b[key]));
}

/**
 * The names a properties replace added, changed and removed, each in code-unit order (the order of the
 * versions the database diffs, `collate "C"`, for the keys `PROPERTY_KEY` allows), and all of them together.
 */
export function propertyChange(
  before: ReadonlyMap<string, JsonValue>,
  after: Readonly<Record<string, JsonValue>>,
): { change: LayerChange; keys: string[] } {
  const added: string[] = [];
  const changed: string[] = [];
  const removed: string[] = [];
  for (const [key, value] of Object.entries(after)) {
    const old = before.get(key);
    if (old === undefined) added.push(key);
    else if (!sameJson(old, value)) changed.push(key);
  }
  for (const key of before.keys()) if (!Object.hasOwn(after, key)) removed.push(key);
  added.sort(compareKeys);
  changed.sort(compareKeys);
  removed.sort(compareKeys);
  return {
    change: { added, changed, removed, sha256: {} },
    keys: [...added, ...changed, ...removed].sort(compareKeys),
  };
}
