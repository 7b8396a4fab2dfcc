import { ConfigHistoryRepository, type AppendedVersion, type JsonValue, type LayerAddress, type Tx } from '#database';
import type { DataSource } from 'typeorm';

/** Who made a layer change and why (DESIGN 14): the token's `sub` or a command's name, and `X-Change-Reason`. */
export interface ChangeAuthor {
  readonly actor: string | null;
  readonly reason: string | null;
}

/**
 * A write that changed nothing (DESIGN 14): its transaction is rolled back, so it appends no version and
 * sends nothing; the writer answers 200 with the layer's unchanged `version`.
 */
export class UnchangedLayer extends Error {
  constructor(readonly version: number) {
    super(`the layer is unchanged at version ${version}`);
    this.name = 'UnchangedLayer';
  }
}

/**
 * Throws `UnchangedLayer` for a version that changed no name (DESIGN 14), also when it would create the layer
 * empty: the transaction rolls back, so the layer goes on not existing (`W/"0"`).
 */
function changed(appended: AppendedVersion): AppendedVersion {
  const { added, changed: modified, removed } = appended.change;
  const previous = appended.version - 1;
  if (added.length + modified.length + removed.length === 0) throw new UnchangedLayer(previous);
  return appended;
}

/**
 * Records the change just written to `layerId` in `tx`: its version and its `config.changed` event
 * `{ host, serviceId, productId, productVersion, envTag, version, keys }` (names only), with the NOTIFY the
 * push listens for (sent after the commit where a control session exists: answer after `announced`).
 * Every writer of layers (admin API, rollback, import, dev seed) ends here or in `replacePropertiesRecorded`.
 */
export async function recordLayerChange(
  history: ConfigHistoryRepository,
  tx: Tx,
  layerId: string,
  author: ChangeAuthor,
): Promise<AppendedVersion> {
  return changed(await history.in(tx).append(layerId, author.actor, author.reason));
}

/**
 * Replaces the layer's properties with `properties` and records the change as `recordLayerChange` would
 * after `writeProperties(…, 'replace')`, in fewer statements: the admin properties writes (PUT and DELETE).
 */
export async function replacePropertiesRecorded(
  history: ConfigHistoryRepository,
  tx: Tx,
  layer: { readonly layerId: string; readonly address: LayerAddress },
  properties: Readonly<Record<string, JsonValue>>,
  author: ChangeAuthor,
): Promise<AppendedVersion> {
  const { layerId, address } = layer;
  return changed(await history.in(tx).replaceProperties(layerId, address, properties, author.actor, author.reason));
}

/** `work`'s result, or `unchanged(version)` when it threw `UnchangedLayer` (its transaction rolled back). */
export async function unlessUnchanged<T>(work: Promise<T>, unchanged: (version: number) => Promise<T> | T): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof UnchangedLayer) return unchanged(error.version);
    throw error;
  }
}

/**
 * The repository `recordLayerChange` needs, on a DataSource outside Nest (import command, dev seed): without
 * a control session, so each version's NOTIFY goes out with its commit.
 */
export function historyRepository(dataSource: DataSource): ConfigHistoryRepository {
  return new ConfigHistoryRepository(dataSource);
}
