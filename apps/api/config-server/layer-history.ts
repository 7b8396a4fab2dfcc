import { ConfigHistoryRepository, type AppendedVersion, type JsonValue, type LayerAddress, type Tx } from '#database';
import type { DataSource } from 'typeorm';

/** Who made a layer change and why (DESIGN 14): the token's `sub` or a command's name, and `X-Change-Reason`. */
export interface ChangeAuthor {
  readonly actor: string | null;
  readonly reason: string | null;
}

/**
 * Records the change just written to `layerId` in `tx`: its version and its `config.changed` event
 * `{ host, serviceId, productId, productVersion, envTag, version, keys }` (names only), with the NOTIFY the
 * push listens for (sent after the commit where a control session exists: answer after `announced`).
 * Every writer of layers (admin API, rollback, import, dev seed) ends here or in `replacePropertiesRecorded`.
 */
export function recordLayerChange(
  history: ConfigHistoryRepository,
  tx: Tx,
  layerId: string,
  author: ChangeAuthor,
): Promise<AppendedVersion> {
  return history.in(tx).append(layerId, author.actor, author.reason);
}

/**
 * Replaces the layer's properties with `properties` and records the change as `recordLayerChange` would
 * after `writeProperties(…, 'replace')`, in fewer statements: the admin properties writes (PUT and DELETE).
 */
export function replacePropertiesRecorded(
  history: ConfigHistoryRepository,
  tx: Tx,
  layer: { readonly layerId: string; readonly address: LayerAddress },
  properties: Readonly<Record<string, JsonValue>>,
  author: ChangeAuthor,
): Promise<AppendedVersion> {
  return history.in(tx).replaceProperties(layer.layerId, layer.address, properties, author.actor, author.reason);
}

/**
 * The repository `recordLayerChange` needs, on a DataSource outside Nest (import command, dev seed): without
 * a control session, so each version's NOTIFY goes out with its commit.
 */
export function historyRepository(dataSource: DataSource): ConfigHistoryRepository {
  return new ConfigHistoryRepository(dataSource);
}
