import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ControlSession } from '../control-session.js';
import type { FilesByKind, LayerChange } from '../entities/config-layer-version.entity.js';
import type { JsonValue, LayerAddress } from '../entities/config-types.js';
import { propertyChange } from '../property-change.js';
import { afterCommit, BaseRepository, type Tx } from '../repository.js';
import { sortedRecord } from '../sorted.js';
import { FEED_LOCK } from './change-event.repository.js';
import type { KeysetPage, PageWindow } from '../keyset.js';
import {
  APPEND,
  COUNT_VERSIONS,
  DROP_UNUSED_KEYS,
  DROP_LAYER_CONTENTS,
  HISTORY_KEYSET,
  historyPage,
  PLAINTEXT_VERSIONS,
  PRUNE,
  PRUNE_LAYER_VERSIONS,
  REMOVE_PROPERTIES,
  REPLACE_PROPERTIES,
  SEAL_VERSIONS,
  STORED_VERSION,
  WRITE_SEALED,
} from './config-history.sql.js';
import type {
  AppendedRow,
  AppendedVersion,
  LayerVersionRecord,
  SealedVersion,
  StoredVersion,
  StoredVersionRow,
} from './config-history.types.js';
import { VersionAnnouncer } from './version-announcer.js';

export { CONFIG_CHANNEL } from './version-announcer.js';

/** A version in a history page: its record, and a sealed version's file references. */
type HistoryRecord = LayerVersionRecord & { fileRefs: FilesByKind<string> | null };
export type {
  AppendedVersion,
  LayerVersionContent,
  LayerVersionRecord,
  SealedVersion,
  StoredVersion,
  StoredVersionContent,
} from './config-history.types.js';

/**
 * The history of config layers (DESIGN 14): appended in each change's transaction (`in(tx)`), read by
 * admins, restored by rollback, pruned by age. Every statement about `config_layer_version` lives here.
 */
@Injectable()
export class ConfigHistoryRepository extends BaseRepository {
  /** Absent outside the api (config:import, the dev seed): those writers notify inside the transaction. */
  private readonly announcer: VersionAnnouncer | undefined;

  constructor(@InjectDataSource() db: DataSource, @Inject(ControlSession) session?: ControlSession) {
    super(db);
    this.announcer = session === undefined ? undefined : new VersionAnnouncer(session, db);
  }

  /**
   * Records the layer's content as its current version and appends its `config.changed` event; call after
   * the change, inside its transaction (`in(tx)`). After the commit, the announcement wakes the feed's readers too.
   * A properties replace has its own, cheaper call: `replaceProperties`.
   */
  async append(layerId: string, actor: string | null, reason: string | null): Promise<AppendedVersion> {
    const tx = this.changeTx();
    const rows = await this.rows<AppendedRow>(APPEND, [
      layerId,
      actor,
      reason,
      FEED_LOCK,
      this.announcer === undefined,
      // The change may have touched files: hash them again (properties writes use replaceProperties).
      true,
    ]);
    const row = rows[0];
    if (row === undefined) throw new Error(`config layer ${layerId} does not exist`);
    const address: LayerAddress = {
      host: row.host,
      serviceId: row.service_id,
      productId: row.product_id,
      productVersion: row.product_version,
      envTag: row.env_tag,
    };
    return {
      version: row.version,
      at: row.at,
      actor,
      reason,
      change: row.change,
      properties: sortedRecord(Object.entries(row.properties)),
      address,
      announced: this.announcedAfterCommit(tx, address, row.version),
    };
  }

  /**
   * A properties replace and its version, with its `config.changed` event, in the transaction (`in(tx)`)
   * that holds the layer's row lock, announced like `append`'s. The same version as
   * `append` after `ConfigLayerRepository.writeProperties(…, 'replace')`, for two statements instead of four:
   * the delete reads the properties it removes, the diff is worked out here, and one function call inserts
   * the properties, the version and the event (migration ConfigPropertiesReplace).
   */
  async replaceProperties(
    layerId: string,
    address: LayerAddress,
    properties: Readonly<Record<string, JsonValue>>,
    actor: string | null,
    reason: string | null,
  ): Promise<AppendedVersion> {
    const tx = this.changeTx();
    const removed = await this.rows<{ key: string; value: JsonValue }>(REMOVE_PROPERTIES, [layerId]);
    const { change, keys } = propertyChange(new Map(removed.map((r) => [r.key, r.value])), properties);
    const rows = await this.rows<{ version: number; at: Date }>(REPLACE_PROPERTIES, [
      layerId,
      JSON.stringify(properties),
      JSON.stringify(change),
      JSON.stringify(keys),
      actor,
      reason,
      FEED_LOCK,
      this.announcer === undefined,
    ]);
    const row = rows[0];
    if (row === undefined) throw new Error(`config layer ${layerId} does not exist`);
    return {
      version: row.version,
      at: row.at,
      actor,
      reason,
      change,
      properties: sortedRecord(Object.entries(properties)),
      address,
      announced: this.announcedAfterCommit(tx, address, row.version),
    };
  }

  /**
   * Writes a sealed layer (DESIGN 17) in one statement: its data key, properties and file references,
   * and the version with its `config.changed` event, announced like `append`'s. The api worked out the
   * change from decrypted content: the database only ever sees sealed values, so it cannot diff them.
   */
  async writeSealed(
    layerId: string,
    address: LayerAddress,
    sealed: SealedVersion,
    actor: string | null,
    reason: string | null,
  ): Promise<Omit<AppendedVersion, 'properties'> & { readonly dataKeyId: string }> {
    const tx = this.changeTx();
    // The stored change names no digest: a file's SHA-256 is worked out when history is read.
    const stored: LayerChange = { ...sealed.change, sha256: {} };
    const { refs } = sealed.files;
    const rows = await this.rows<{ version: number; at: Date; data_key_id: string }>(WRITE_SEALED, [
      layerId,
      actor,
      reason,
      sealed.dataKey.kid,
      sealed.dataKey.wrapped,
      // One JSON for the properties' rows and the version's copy: key to sealed value, base64.
      JSON.stringify(Object.fromEntries(sealed.properties.map(([key, value]) => [key, value.toString('base64')]))),
      JSON.stringify(stored),
      JSON.stringify(sealed.fileRefs),
      JSON.stringify(sealed.keys),
      this.announcer === undefined,
      sealed.files.kinds,
      refs.map((r) => r.kind),
      refs.map((r) => r.name),
      refs.map((r) => r.contentId),
      // Held until commit: the feed's readers see no seq that may still commit (ChangeEventRepository).
      FEED_LOCK,
    ]);
    const row = rows[0];
    if (row === undefined) throw new Error(`config layer ${layerId} does not exist`);
    return {
      version: row.version,
      at: row.at,
      actor,
      reason,
      change: sealed.change,
      address,
      dataKeyId: String(row.data_key_id),
      announced: this.announcedAfterCommit(tx, address, row.version),
    };
  }

  /** One version as stored (plaintext or sealed); null when it never existed or was pruned. */
  async storedVersion(layerId: string, version: number, withContents: boolean): Promise<StoredVersion | null> {
    const rows = await this.rows<StoredVersionRow>(STORED_VERSION, [layerId, version, withContents]);
    const row = rows[0];
    if (row === undefined) return null;
    const record = { version: row.version, at: row.at, actor: row.actor, reason: row.reason, change: row.change };
    if (row.sealed_properties !== null && row.data_key_id !== null && row.file_refs !== null) {
      const content = {
        form: 'sealed' as const,
        dataKeyId: String(row.data_key_id),
        sealedProperties: row.sealed_properties,
        fileRefs: row.file_refs,
      };
      return { ...record, content };
    }
    const content = {
      form: 'plain' as const,
      properties: sortedRecord(Object.entries(row.properties ?? {})),
      files: row.files ?? { cert: {}, file: {} },
      fileContents: row.file_contents,
    };
    return { ...record, content };
  }

  /** The transaction of the change a version is appended in; a version never stands alone. */
  private changeTx(): Tx {
    const tx = this.tx;
    if (tx === undefined || this.manager.queryRunner?.isTransactionActive !== true) {
      throw new Error('a layer version is appended inside the transaction of its change');
    }
    return tx;
  }

  /** Settles once the controllers were told of `version` (after the commit), at once without a control session. */
  private announcedAfterCommit(tx: Tx, address: LayerAddress, version: number): Promise<void> {
    const announcer = this.announcer;
    if (announcer === undefined) return Promise.resolve();
    // The controllers' payload (apps/controller/registry/config-push.ts): the address and the version.
    const payload = JSON.stringify({ ...address, version });
    return new Promise((settle) => afterCommit(tx, () => void announcer.announce(payload).then(() => settle())));
  }

  /** The order of `page`, whose cursors carry a version number. */
  readonly keyset = HISTORY_KEYSET;

  /** The layer's versions, newest first (a sealed version with its file references), and how many are kept. */
  async page(layerId: string, window: PageWindow): Promise<KeysetPage<HistoryRecord>> {
    const [rows, counted] = await Promise.all([
      this.manager.query<HistoryRecord[]>(...historyPage(layerId, window)),
      window.withTotal ? this.manager.query<{ total: number }[]>(COUNT_VERSIONS, [layerId]) : undefined,
    ]);
    const { rows: versions, next } = HISTORY_KEYSET.pageOf(rows, window.limit);
    return { rows: versions, next, ...(counted === undefined ? {} : { total: counted[0]?.total ?? 0 }) };
  }

  /**
   * Deletes versions older than `days` days beyond the last `keep` of each layer, and beyond its last `max`,
   * with the contents and data keys only they used; answers how many versions went.
   */
  async prune(days: number, keep: number, max: number): Promise<number> {
    const rows = await this.manager.query<{ pruned: number }[]>(PRUNE, [days, keep, max]);
    await this.manager.query(DROP_UNUSED_KEYS);
    return rows[0]?.pruned ?? 0;
  }

  /**
   * Deletes the layer's versions up to `upTo` with the contents only they used, in the writing transaction
   * (`in(tx)`): CONFIG_HISTORY_MAX_VERSIONS holds at every commit. Their data keys go with the hourly `prune`.
   */
  async pruneUpTo(layerId: string, upTo: number): Promise<number> {
    this.changeTx();
    const gone = await this.rows<{ file_refs: FilesByKind<string> | null }>(PRUNE_LAYER_VERSIONS, [layerId, upTo]);
    // Only the contents the pruned versions named can have lost their last reference.
    const named = gone.flatMap((v) =>
      v.file_refs === null ? [] : [...Object.values(v.file_refs.cert), ...Object.values(v.file_refs.file)],
    );
    const held = [...new Set(named.filter((id) => /^\d+$/.test(id)))];
    if (held.length > 0) await this.rows(DROP_LAYER_CONTENTS, [layerId, held]);
    return gone.length;
  }

  /** The layer's plaintext versions (before `keys:encrypt-existing`), oldest first. */
  async plaintextVersions(
    layerId: string,
  ): Promise<{ version: number; properties: Record<string, JsonValue>; fileContents: FilesByKind<string> }[]> {
    return this.manager.query(PLAINTEXT_VERSIONS, [layerId]);
  }

  /**
   * Replaces plaintext versions' content by its sealed form (`keys:encrypt-existing`); their changes lose
   * the file digests they stored (history works them out when read).
   */
  async sealVersions(
    layerId: string,
    sealed: readonly {
      version: number;
      dataKeyId: string;
      sealedProperties: Record<string, string>;
      fileRefs: FilesByKind<string>;
    }[],
  ): Promise<void> {
    if (sealed.length === 0) return;
    await this.manager.query(SEAL_VERSIONS, [layerId, JSON.stringify(sealed)]);
  }
}
