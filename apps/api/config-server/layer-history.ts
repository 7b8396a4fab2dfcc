import { ChangeEventRepository, ConfigHistoryRepository, type AppendedVersion, type Tx } from '#database';
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
 * `written.files` false: the change wrote no file. Every writer of layers (admin API, rollback, import,
 * dev seed) ends here.
 */
export async function recordLayerChange(
  repositories: { readonly history: ConfigHistoryRepository; readonly events: ChangeEventRepository },
  tx: Tx,
  layerId: string,
  author: ChangeAuthor,
  written: { readonly files: boolean } = { files: true },
): Promise<AppendedVersion> {
  const appended = await repositories.history.in(tx).append(layerId, author.actor, author.reason, written.files);
  repositories.events.in(tx).appendedElsewhere();
  return appended;
}

/** The repositories `recordLayerChange` needs, on a DataSource outside Nest (import command, dev seed). */
export function historyRepositories(dataSource: DataSource): {
  history: ConfigHistoryRepository;
  events: ChangeEventRepository;
} {
  return { history: new ConfigHistoryRepository(dataSource), events: new ChangeEventRepository(dataSource) };
}
