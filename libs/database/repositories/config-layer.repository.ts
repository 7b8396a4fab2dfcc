import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull, type FindOptionsWhere } from 'typeorm';
import { ConfigLayer } from '../entities/config-layer.entity.js';
import {
  fileValueName,
  type FileKind,
  type JsonValue,
  type LayerAddress,
  type Stored,
} from '../entities/config-types.js';
import { Keyset, type KeysetPage, type PageWindow } from '../keyset.js';
import { BaseRepository, bind } from '../repository.js';
import { mergeByRank, storedByKey, type MergedRow } from './merged-values.js';
import { sortedRecord } from '../sorted.js';

/** One layer in the operators' list: its address, version and how much it holds. */
export interface LayerSummary {
  readonly address: LayerAddress;
  readonly version: number;
  readonly properties: number;
  readonly certs: number;
  readonly files: number;
}

interface LayerSummaryRow {
  readonly host: string;
  readonly service_id: string | null;
  readonly product_id: string | null;
  readonly product_version: string | null;
  readonly env_tag: string | null;
  readonly aggregate_version: number;
  readonly properties: number;
  readonly certs: number;
  readonly files: number;
}

/** The operators' list order: by address, absent parts where the address index puts them, the id last. */
const LAYER_KEYSET = new Keyset([
  { sql: 'l.host', type: 'text' },
  { sql: 'l.service_id', type: 'text', nullable: true, nulls: 'last' },
  { sql: 'l.product_id', type: 'text', nullable: true },
  { sql: 'l.product_version', type: 'text', nullable: true },
  { sql: 'l.env_tag', type: 'text', nullable: true, nulls: 'first' },
  { sql: 'l.layer_id', type: 'bigint' },
]);

/** How a write treats what the layer already holds. */
export type WriteMode = 'replace' | 'keep-existing';

function addressWhere(address: LayerAddress): FindOptionsWhere<ConfigLayer> {
  // `= null` never matches in SQL: absent parts are looked up with IS NULL.
  return {
    host: address.host,
    serviceId: address.serviceId ?? IsNull(),
    productId: address.productId ?? IsNull(),
    productVersion: address.productVersion ?? IsNull(),
    envTag: address.envTag ?? IsNull(),
  };
}

/**
 * The layers a runtime sees, lowest first: product, product+env, service, service+env (DESIGN 7). `rank`
 * orders them; rows of a higher rank overwrite a lower one's key. One statement, so one snapshot.
 */
const LAYERS_OF_REQUEST = `
  select 2 + (l.env_tag is not null)::int as rank, l.layer_id, l.aggregate_version, l.data_key_id
    from config_layer l
   where l.host = $1 and l.service_id = $2 and l.product_id is null and (l.env_tag is null or l.env_tag = $5)
  union all
  select (l.env_tag is not null)::int as rank, l.layer_id, l.aggregate_version, l.data_key_id
    from config_layer l
   where l.host = $1 and l.product_id = $3 and l.product_version = $4 and l.service_id is null
     and (l.env_tag is null or l.env_tag = $5)`;

/**
 * A runtime's properties across its layers, lowest rank first ($1 host, $2 serviceId, $3 productId,
 * $4 productVersion, $5 envTag), each row with `versions`: rank:version of every layer holding a property.
 * When `versions` equals $6 (the merge the caller holds) it is the only row: a version's values never change,
 * so a repeated read transfers and parses none. Exported so the bench's bare baseline runs this statement.
 */
export const MERGED_PROPERTIES = `
  with layer as materialized (${LAYERS_OF_REQUEST}),
  held as (
    select layer.* from layer where exists (select 1 from config_property p where p.layer_id = layer.layer_id)
  ),
  merged as (
    select coalesce(string_agg(h.rank || ':' || h.aggregate_version, ',' order by h.rank), '') as versions from held h
  )
  select p.property_key as key, p.property_value as value, p.sealed, h.data_key_id, h.rank, m.versions
    from merged m
    left join (held h join config_property p on p.layer_id = h.layer_id) on m.versions is distinct from $6::text
   order by h.rank`;

/** A row of MERGED_PROPERTIES: a property, or (no property, or the caller's versions still current) none. */
type MergedPropertyRow = (MergedRow<JsonValue> | { readonly key: null }) & { readonly versions: string };

const requestParams = (request: LayerAddress): (string | null)[] => [
  request.host,
  request.serviceId,
  request.productId,
  request.productVersion,
  request.envTag,
];

/**
 * The config layers aggregate (layer, its properties and files), shared by the HTTP services, the import
 * command and the dev seed. Writes are plain SQL (one statement per layer part; bench/), so they also
 * work on a DataSource that has not registered the entities (the dev seed's).
 */
@Injectable()
export class ConfigLayerRepository extends BaseRepository {
  constructor(@InjectDataSource() db: DataSource) {
    super(db);
  }

  find(address: LayerAddress, lock = false): Promise<ConfigLayer | null> {
    return this.manager.getRepository(ConfigLayer).findOne({
      where: addressWhere(address),
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
  }

  /**
   * Creates the layer row or touches the existing one, and holds its row lock until the transaction ends:
   * concurrent writers of one layer queue here, so each replace is whole. The row stays when the layer is
   * emptied: it carries the version counter (the ETag) that its history continues (DESIGN 14).
   */
  async upsert(address: LayerAddress, user: string | null): Promise<string> {
    return (await this.upsertVersioned(address, user)).layerId;
  }

  /**
   * `upsert`, answering also the version this write gives the layer and the one it had before (0: it did
   * not exist), so `If-Match` is judged under the row lock, without a read that a concurrent create could pass.
   */
  async upsertVersioned(
    address: LayerAddress,
    user: string | null,
  ): Promise<{ layerId: string; version: number; previous: number }> {
    const rows: { layer_id: string; aggregate_version: number; created: boolean }[] = await this.rows(
      `insert into config_layer (host, service_id, product_id, product_version, env_tag, update_user, update_ts)
       values ($1, $2, $3, $4, $5, $6, now())
       on conflict on constraint uq_config_layer_address
         do update set update_user = excluded.update_user, update_ts = excluded.update_ts,
                       aggregate_version = config_layer.aggregate_version + 1
       returning layer_id, aggregate_version, (xmax = 0) as created`,
      [address.host, address.serviceId, address.productId, address.productVersion, address.envTag, user],
    );
    const row = rows[0];
    if (row === undefined) throw new Error('upsert of config_layer returned no row');
    return {
      layerId: String(row.layer_id),
      version: row.aggregate_version,
      previous: row.created ? 0 : row.aggregate_version - 1,
    };
  }

  /** The order of `page`, whose cursors carry a layer's address and id. */
  readonly keyset = LAYER_KEYSET;

  /**
   * The layers of `host` (all hosts when undefined) with how much each holds, in address order (index
   * ix_config_layer_keyset), from `window`'s offset or after its layer; the count only when it asks.
   */
  async page(host: string | undefined, window: PageWindow): Promise<KeysetPage<LayerSummary>> {
    const parameters: unknown[] = host === undefined ? [] : [host];
    const where = host === undefined ? 'where true' : 'where l.host = $1';
    const after =
      window.after === undefined ? '' : `and ${LAYER_KEYSET.after(window.after, (v) => bind(parameters, v))}`;
    const [rows, counted] = await Promise.all([
      this.manager.query<LayerSummaryRow[]>(
        `select l.host, l.service_id, l.product_id, l.product_version, l.env_tag, l.aggregate_version,
                (select count(*)::int from config_property p where p.layer_id = l.layer_id) as properties,
                (select count(*)::int from config_file f where f.layer_id = l.layer_id and f.kind = 'cert') as certs,
                (select count(*)::int from config_file f where f.layer_id = l.layer_id and f.kind = 'file') as files,
                ${LAYER_KEYSET.select()}
           from config_layer l ${where} ${after}
          order by ${LAYER_KEYSET.orderBy()}
         offset ${bind(parameters, window.offset)} limit ${bind(parameters, window.limit + 1)}`,
        parameters,
      ),
      window.withTotal
        ? this.manager.query<{ total: number }[]>(`select count(*)::int as total from config_layer l ${where}`, [
            ...(host === undefined ? [] : [host]),
          ])
        : undefined,
    ]);
    const { rows: page, next } = LAYER_KEYSET.pageOf(rows, window.limit);
    const layers = page.map((row) => ({
      address: {
        host: row.host,
        serviceId: row.service_id,
        productId: row.product_id,
        productVersion: row.product_version,
        envTag: row.env_tag,
      },
      version: row.aggregate_version,
      properties: row.properties,
      certs: row.certs,
      files: row.files,
    }));
    return { rows: layers, next, ...(counted === undefined ? {} : { total: counted[0]?.total ?? 0 }) };
  }

  async writeProperties(
    layerId: string,
    properties: Readonly<Record<string, JsonValue>>,
    mode: WriteMode,
  ): Promise<void> {
    if (mode === 'replace') await this.rows('delete from config_property where layer_id = $1', [layerId]);
    if (Object.keys(properties).length === 0) return;
    // One statement for the whole layer: jsonb_each keeps each value's JSON type.
    await this.rows(
      `insert into config_property (layer_id, property_key, property_value)
       select $1, e.key, e.value from jsonb_each($2::jsonb) as e
       ${mode === 'keep-existing' ? 'on conflict on constraint pk_config_property do nothing' : ''}`,
      [layerId, JSON.stringify(properties)],
    );
  }

  async writeFiles(
    layerId: string,
    kind: FileKind,
    files: ReadonlyMap<string, Buffer>,
    mode: WriteMode,
  ): Promise<void> {
    if (mode === 'replace') {
      await this.rows('delete from config_file where layer_id = $1 and kind = $2', [layerId, kind]);
    }
    if (files.size === 0) return;
    const encoded = sortedRecord([...files].map(([name, bytes]) => [name, bytes.toString('base64')] as const));
    await this.rows(
      `insert into config_file (layer_id, kind, file_name, content)
       select $1, $2, e.key, decode(e.value, 'base64') from jsonb_each_text($3::jsonb) as e
       ${mode === 'keep-existing' ? 'on conflict on constraint pk_config_file do nothing' : ''}`,
      [layerId, kind, JSON.stringify(encoded)],
    );
  }

  /**
   * The properties a runtime sees for `request`, merged across its layers in one statement, as stored
   * (plaintext or sealed): the caller opens only the values that won. `versions` names the layer versions
   * they came from, so a caller may keep what it opened per set of versions (DESIGN 17).
   */
  /**
   * The winning stored value of each key for `request`, and the versions they come from. With `known` (the
   * versions of a merge the caller holds) still current, no value is read: `values` is undefined.
   */
  async mergedProperties(
    request: LayerAddress,
    known: string | null = null,
  ): Promise<{ readonly values: Map<string, Stored<JsonValue>> | undefined; readonly versions: string }> {
    const rows = await this.rows<MergedPropertyRow>(MERGED_PROPERTIES, [...requestParams(request), known]);
    // The statement always answers at least the row that carries `versions`.
    const versions = rows[0]?.versions ?? '';
    if (known !== null && versions === known) return { values: undefined, versions };
    const held = rows.filter((r): r is MergedPropertyRow & MergedRow<JsonValue> => r.key !== null);
    return { values: storedByKey(mergeByRank(held.map((r) => ({ key: r.key, value: r }))), request), versions };
  }

  /**
   * The files of `kind` a runtime sees for `request`, as stored, merged across its layers; or, when their
   * contents together exceed `maxBytes`, only that total (the contents never leave the database then).
   */
  async mergedFiles(
    request: LayerAddress,
    kind: FileKind,
    maxBytes: number,
  ): Promise<{ readonly files: Map<string, Stored<Buffer>> } | { readonly tooLarge: number }> {
    // octet_length of a stored bytea reads its size, not its content; a stored content keeps its size.
    const rows = await this.rows<MergedRow<Buffer> & { total: string }>(
      `select key, case when total <= $7 then value end as value, case when total <= $7 then sealed end as sealed,
              data_key_id, rank, total
         from (select f.file_name as key, f.content as value, c.sealed, c.data_key_id, layer.rank,
                      sum(coalesce(octet_length(f.content), c.size)) over () as total
                 from (${LAYERS_OF_REQUEST}) as layer
                 join config_file f on f.layer_id = layer.layer_id and f.kind = $6
                 left join config_file_content c on c.content_id = f.content_id) as merged
        order by rank`,
      [...requestParams(request), kind, maxBytes],
    );
    const total = Number(rows[0]?.total ?? 0);
    if (total > maxBytes) return { tooLarge: total };
    const merged = mergeByRank(rows.map((r) => ({ key: r.key, value: r })));
    return { files: storedByKey(merged, request, (name) => fileValueName(kind, name)) };
  }
}
