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
import { VersionAnnouncer } from './version-announcer.js';

export { CONFIG_CHANNEL } from './version-announcer.js';

/** A version as history lists it: who, when, why and which names changed; never values. */
export interface LayerVersionRecord {
  readonly version: number;
  readonly at: Date;
  readonly actor: string | null;
  readonly reason: string | null;
  readonly change: LayerChange;
}

/** A version's whole content (`GET history/{version}`): properties, file hashes, contents when asked for. */
export interface LayerVersionContent extends LayerVersionRecord {
  readonly properties: Record<string, JsonValue>;
  readonly files: FilesByKind<string>;
  /** Base64 contents by kind and name; only when asked for. */
  readonly fileContents?: FilesByKind<string>;
}

/** A version just appended, with the layer's address and its properties now. */
export interface AppendedVersion extends LayerVersionRecord {
  readonly address: LayerAddress;
  readonly properties: Record<string, JsonValue>;
  /**
   * Settles once the controllers were told of this version (after the commit; never when it rolls back):
   * writers answer after it, so whoever saw the answer can count on the notification being on its way.
   */
  readonly announced: Promise<void>;
}

interface AppendedRow {
  readonly version: number;
  readonly at: Date;
  readonly change: LayerChange;
  readonly properties: Record<string, JsonValue>;
  readonly host: string;
  readonly service_id: string | null;
  readonly product_id: string | null;
  readonly product_version: string | null;
  readonly env_tag: string | null;
}

/**
 * Appends the layer's current content as its version, with the names that changed and its `config.changed`
 * event, and when $5 the NOTIFY the push listens for (delivered at commit); $6 false: the change wrote no
 * file, the previous version's are kept. Function `config_layer_append_version`, migration
 * ConfigHistoryLeanAppend.
 */
const APPEND = `
  select version, at, change, properties, host, service_id, product_id, product_version, env_tag
    from config_layer_append_version($1, $2, $3, $4, $5, $6)`;

/** Deletes the layer's ($1) properties, answering them: what a replace removes, for its diff. */
const REMOVE_PROPERTIES = `
  with gone as (delete from config_property where layer_id = $1 returning property_key, property_value)
  select property_key as key, property_value as value from gone`;

/** Inserts the properties $2, then appends the version and its event (see `replaceProperties`). */
const REPLACE_PROPERTIES = `select version, at from config_layer_replace_properties($1, $2, $3, $4, $5, $6, $7, $8)`;

/** Puts version $2's content back into the layer's tables ($1 layer); the current rows are deleted first. */
const RESTORE = `
  with v as (
    select properties, file_contents from config_layer_version where layer_id = $1 and version = $2
  ), properties as (
    insert into config_property (layer_id, property_key, property_value)
    select $1, e.key, e.value from v, jsonb_each(v.properties) e
  )
  insert into config_file (layer_id, kind, file_name, content)
  select $1, k.kind, e.key, decode(e.value, 'base64')
    from v, lateral (values ('cert', v.file_contents->'cert'), ('file', v.file_contents->'file')) as k(kind, m),
         jsonb_each_text(k.m) e`;

/**
 * Deletes versions older than $1 days, keeping the last $2 of every layer whatever their age, and every
 * version beyond a layer's last $3. Versions are numbered without gaps up to the layer's
 * `aggregate_version`, so the last $2 are those above it minus $2.
 */
const PRUNE = `
  with gone as (
    delete from config_layer_version v using config_layer l
     where v.layer_id = l.layer_id
       and ((v.at < now() - $1 * interval '1 day' and v.version <= l.aggregate_version - $2)
            or v.version <= l.aggregate_version - $3)
    returning 1
  )
  select count(*)::int as pruned from gone`;

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
    const tx = this.tx;
    if (tx === undefined || this.manager.queryRunner?.isTransactionActive !== true) {
      throw new Error('a layer version is appended inside the transaction of its change');
    }
    const rows = await this.manager.query<AppendedRow[]>(APPEND, [
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
    const tx = this.tx;
    if (tx === undefined || this.manager.queryRunner?.isTransactionActive !== true) {
      throw new Error('a layer version is appended inside the transaction of its change');
    }
    const removed = await this.manager.query<{ key: string; value: JsonValue }[]>(REMOVE_PROPERTIES, [layerId]);
    const { change, keys } = propertyChange(new Map(removed.map((r) => [r.key, r.value])), properties);
    const rows = await this.manager.query<{ version: number; at: Date }[]>(REPLACE_PROPERTIES, [
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

  /** Settles once the controllers were told of `version` (after the commit), at once without a control session. */
  private announcedAfterCommit(tx: Tx, address: LayerAddress, version: number): Promise<void> {
    const announcer = this.announcer;
    if (announcer === undefined) return Promise.resolve();
    // The controllers' payload (apps/controller/registry/config-push.ts): the address and the version.
    const payload = JSON.stringify({ ...address, version });
    return new Promise((settle) => afterCommit(tx, () => void announcer.announce(payload).then(() => settle())));
  }

  /** The layer's versions, newest first, and how many are kept. */
  async page(
    layerId: string,
    offset: number,
    limit: number,
  ): Promise<{ total: number; versions: LayerVersionRecord[] }> {
    const [versions, counted] = await Promise.all([
      this.manager.query<LayerVersionRecord[]>(
        `select version, at, actor, reason, change from config_layer_version
          where layer_id = $1 order by version desc offset $2 limit $3`,
        [layerId, offset, limit],
      ),
      this.manager.query<{ total: number }[]>(
        'select count(*)::int as total from config_layer_version where layer_id = $1',
        [layerId],
      ),
    ]);
    return { total: counted[0]?.total ?? 0, versions };
  }

  /** One version's content; null when it never existed or was pruned. */
  async version(layerId: string, version: number, withContents: boolean): Promise<LayerVersionContent | null> {
    const rows = await this.manager.query<(LayerVersionContent & { fileContents: FilesByKind<string> | null })[]>(
      `select version, at, actor, reason, change, properties, files,
              ${withContents ? 'file_contents' : 'null'} as "fileContents"
         from config_layer_version where layer_id = $1 and version = $2`,
      [layerId, version],
    );
    const row = rows[0];
    if (row === undefined) return null;
    const { fileContents, ...rest } = row;
    const content = { ...rest, properties: sortedRecord(Object.entries(rest.properties)) };
    return fileContents === null ? content : { ...content, fileContents };
  }

  /**
   * Replaces the layer's properties and files with those of `version` (the caller holds the layer's row
   * lock); false, changing nothing, when that version is not kept.
   */
  async restore(layerId: string, version: number): Promise<boolean> {
    const kept = await this.manager.query<unknown[]>(
      'select 1 from config_layer_version where layer_id = $1 and version = $2',
      [layerId, version],
    );
    if (kept.length === 0) return false;
    // Two tables, one statement; the inserts follow as their own statement, after the deletes took effect.
    await this.manager.query(
      'with p as (delete from config_property where layer_id = $1) delete from config_file where layer_id = $1',
      [layerId],
    );
    await this.manager.query(RESTORE, [layerId, version]);
    return true;
  }

  /** Deletes versions older than `days` days beyond the last `keep` of each layer, and beyond its last `max`. */
  async prune(days: number, keep: number, max: number): Promise<number> {
    const rows = await this.manager.query<{ pruned: number }[]>(PRUNE, [days, keep, max]);
    return rows[0]?.pruned ?? 0;
  }
}
