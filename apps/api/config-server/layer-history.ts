import {
  ChangeEventRepository,
  ConfigHistoryRepository,
  type AppendedVersion,
  type NewChangeEvent,
  type Tx,
} from '#database';
import type { DataSource } from 'typeorm';

/** Who made a layer change and why (DESIGN 14): the token's `sub` or a command's name, and `X-Change-Reason`. */
export interface ChangeAuthor {
  readonly actor: string | null;
  readonly reason: string | null;
}

/** `config.changed` for the change feed: the layer's address, its new version and the names that changed. */
export function configChangedEvent(appended: AppendedVersion): NewChangeEvent {
  const { change, address } = appended;
  const keys = [...new Set([...change.added, ...change.changed, ...change.removed])].sort();
  return {
    type: 'config.changed',
    actor: appended.actor,
    hostId: address.host,
    data: { ...address, version: appended.version, keys },
  };
}

/**
 * Records the change just written to `layerId` in `tx`: its version (with the NOTIFY the push listens for)
 * and its `config.changed` event. Every writer of layers (admin API, rollback, import, dev seed) ends here.
 */
export async function recordLayerChange(
  repositories: { readonly history: ConfigHistoryRepository; readonly events: ChangeEventRepository },
  tx: Tx,
  layerId: string,
  author: ChangeAuthor,
): Promise<AppendedVersion> {
  const appended = await repositories.history.in(tx).append(layerId, author.actor, author.reason);
  await repositories.events.in(tx).append([configChangedEvent(appended)]);
  return appended;
}

/** The repositories `recordLayerChange` needs, on a DataSource outside Nest (import command, dev seed). */
export function historyRepositories(dataSource: DataSource): {
  history: ConfigHistoryRepository;
  events: ChangeEventRepository;
} {
  return { history: new ConfigHistoryRepository(dataSource), events: new ChangeEventRepository(dataSource) };
}
