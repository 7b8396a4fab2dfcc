/** What `onConfigChange` tells a runtime (DESIGN 14): the types and the diff of two flat configs. */

/** A layer's address as `config/changed` names it (absent parts null). */
export interface ConfigLayerAddress {
  readonly host: string;
  readonly serviceId: string | null;
  readonly productId: string | null;
  readonly productVersion: string | null;
  readonly envTag: string | null;
}

/** What `onConfigChange` callbacks get: the whole new config and the keys that differ from the last one. */
export interface ConfigChange {
  readonly values: Readonly<Record<string, unknown>>;
  readonly added: readonly string[];
  readonly changed: readonly string[];
  readonly removed: readonly string[];
  /** The previous value of each changed or removed key. */
  readonly previous: Readonly<Record<string, unknown>>;
  /** What made the client read again: a `config/changed` (its layer and version) or a reconnect. */
  readonly cause:
    | { readonly type: 'pushed'; readonly layer: ConfigLayerAddress; readonly version: number | null }
    | { readonly type: 'reconnected' };
}

export type ConfigChangeListener = (change: ConfigChange) => void;

/** The keys that differ between two flat configs (values compared as JSON: lists and maps too). */
export function configDiff(
  before: Readonly<Record<string, unknown>>,
  after: Readonly<Record<string, unknown>>,
): Pick<ConfigChange, 'added' | 'changed' | 'removed' | 'previous'> {
  const added: string[] = [];
  const changed: string[] = [];
  const removed: string[] = [];
  const previous: Record<string, unknown> = {};
  for (const key of Object.keys(after)) {
    if (!Object.hasOwn(before, key)) added.push(key);
    else if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) {
      changed.push(key);
      previous[key] = before[key];
    }
  }
  for (const key of Object.keys(before)) {
    if (Object.hasOwn(after, key)) continue;
    removed.push(key);
    previous[key] = before[key];
  }
  return { added: added.sort(), changed: changed.sort(), removed: removed.sort(), previous };
}
