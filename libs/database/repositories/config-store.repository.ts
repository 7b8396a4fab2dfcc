import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  fileValueName,
  type FileKind,
  type JsonValue,
  type LayerAddress,
  type Stored,
} from '../entities/config-types.js';
import { BaseRepository } from '../repository.js';
import { compareKeys } from '../sorted.js';

/** One of a layer's files as stored: its content inline (plaintext) or a stored content (sealed). */
export interface StoredFile {
  readonly kind: FileKind;
  readonly name: string;
  /** The stored content it refers to; null for an inline plaintext content. */
  readonly contentId: string | null;
  readonly size: number;
  /** Undefined for a sealed content of a kind whose contents were not asked for. */
  readonly value: Stored<Buffer> | undefined;
}

/** A file content to store once: sealed under its own data key. */
export interface NewContent {
  readonly dataKeyId: string;
  readonly sealed: Buffer;
  readonly size: number;
}

/** A stored content as history reads it. */
export interface StoredContent extends NewContent {
  readonly contentId: string;
}

interface PropertyRow {
  readonly key: string;
  readonly value: JsonValue | null;
  readonly sealed: Buffer | null;
  readonly data_key_id: string | null;
}

interface FileRow {
  readonly kind: FileKind;
  readonly name: string;
  readonly content: Buffer | null;
  readonly content_id: string | null;
  readonly sealed: Buffer | null;
  readonly data_key_id: string | null;
  readonly size: number;
}

/** A row's value: plaintext, or sealed under its data key with its AAD's address and name. */
export function storedOf<T>(
  plain: T | null,
  sealed: Buffer | null,
  dataKeyId: string | null,
  address: LayerAddress,
  name: string,
): Stored<T> {
  if (plain !== null) return { plain };
  if (sealed === null || dataKeyId === null) throw new Error(`config ${name} has neither a value nor a sealed one`);
  return { sealed, dataKeyId: String(dataKeyId), address, name };
}

/**
 * A layer's values as stored, plaintext or sealed (DESIGN 17), and its file contents, stored once and
 * referred to by the layer's files and its versions (DESIGN 14). Bytes in, bytes out: sealing and opening
 * are the api's (`ConfigVault`); nothing here sees a key.
 */
@Injectable()
export class ConfigStoreRepository extends BaseRepository {
  constructor(@InjectDataSource() db: DataSource) {
    super(db);
  }

  /** The layer's properties by key, in key order. */
  async properties(layerId: string, address: LayerAddress): Promise<Map<string, Stored<JsonValue>>> {
    const rows = await this.rows<PropertyRow>(
      `select p.property_key as key, p.property_value as value, p.sealed, l.data_key_id
         from config_property p join config_layer l on l.layer_id = p.layer_id where p.layer_id = $1`,
      [layerId],
    );
    return propertiesOf(rows, address);
  }

  /**
   * The layer's files of every kind, by kind then name, with the contents of `kinds` (a plaintext content
   * always comes along: it is the row itself).
   */
  async files(layerId: string, address: LayerAddress, kinds: readonly FileKind[]): Promise<StoredFile[]> {
    const rows = await this.rows<FileRow>(
      `select f.kind, f.file_name as name, f.content, f.content_id, c.data_key_id,
              case when f.kind = any($2::varchar[]) then c.sealed end as sealed,
              coalesce(octet_length(f.content), c.size) as size
         from config_file f left join config_file_content c on c.content_id = f.content_id
        where f.layer_id = $1`,
      [layerId, kinds],
    );
    return filesOf(rows, address);
  }

  /** `properties` and `files` in one statement: what a sealed write diffs against, under the layer's lock. */
  async current(
    layerId: string,
    address: LayerAddress,
    kinds: readonly FileKind[],
  ): Promise<{ properties: Map<string, Stored<JsonValue>>; files: StoredFile[] }> {
    const rows = await this.rows<PropertyRow & FileRow & { part: 'p' | 'f' }>(
      `select 'p' as part, p.property_key as key, p.property_value as value, p.sealed, l.data_key_id,
              null::varchar as kind, null::varchar as name, null::bytea as content, null::bigint as content_id,
              null::int as size
         from config_property p join config_layer l on l.layer_id = p.layer_id where p.layer_id = $1
       union all
       select 'f', null, null, case when f.kind = any($2::varchar[]) then c.sealed end, c.data_key_id,
              f.kind, f.file_name, f.content, f.content_id, coalesce(octet_length(f.content), c.size)
         from config_file f left join config_file_content c on c.content_id = f.content_id
        where f.layer_id = $1`,
      [layerId, kinds],
    );
    return {
      properties: propertiesOf(
        rows.filter((r) => r.part === 'p'),
        address,
      ),
      files: filesOf(
        rows.filter((r) => r.part === 'f'),
        address,
      ),
    };
  }

  /** Replaces the layer's properties with sealed ones, all under `dataKeyId`, which becomes the layer's key. */
  async replaceSealedProperties(
    layerId: string,
    dataKeyId: string,
    entries: readonly (readonly [key: string, sealed: Buffer])[],
  ): Promise<void> {
    await this.manager.query('delete from config_property where layer_id = $1', [layerId]);
    await this.manager.query('update config_layer set data_key_id = $2 where layer_id = $1', [layerId, dataKeyId]);
    if (entries.length === 0) return;
    await this.manager.query(
      `insert into config_property (layer_id, property_key, sealed)
       select $1, e.key, e.sealed from unnest($2::varchar[], $3::bytea[]) as e(key, sealed)`,
      [layerId, entries.map(([key]) => key), entries.map(([, sealed]) => sealed)],
    );
  }

  /** Replaces the layer's files of `kinds` with references to stored contents. */
  async replaceFileRefs(
    layerId: string,
    kinds: readonly FileKind[],
    refs: readonly { kind: FileKind; name: string; contentId: string }[],
  ): Promise<void> {
    await this.manager.query('delete from config_file where layer_id = $1 and kind = any($2::varchar[])', [
      layerId,
      kinds,
    ]);
    if (refs.length === 0) return;
    await this.manager.query(
      `insert into config_file (layer_id, kind, file_name, content_id)
       select $1, r.kind, r.name, r.content_id from unnest($2::varchar[], $3::varchar[], $4::bigint[])
           as r(kind, name, content_id)`,
      [layerId, refs.map((r) => r.kind), refs.map((r) => r.name), refs.map((r) => r.contentId)],
    );
  }

  /** Stores file contents of the layer; answers their ids in the order given. */
  async insertContents(layerId: string, contents: readonly NewContent[]): Promise<string[]> {
    if (contents.length === 0) return [];
    const rows = await this.manager.query<{ content_id: string; n: string }[]>(
      `with c as (
         select * from unnest($2::bigint[], $3::bytea[], $4::int[]) with ordinality as c(data_key_id, sealed, size, n)
       ), written as (
         insert into config_file_content (layer_id, data_key_id, sealed, size)
         select $1, c.data_key_id, c.sealed, c.size from c order by c.n
         returning content_id
       )
       select content_id from written order by content_id`,
      [layerId, contents.map((c) => c.dataKeyId), contents.map((c) => c.sealed), contents.map((c) => c.size)],
    );
    // Identity values follow the insert's order, which follows `order by n`.
    return rows.map((r) => String(r.content_id));
  }

  /**
   * Stores file contents of the layer, each with its own new data key (wrapped under `kid`), in one
   * statement; answers their content and data key ids in the order given.
   */
  async insertSealedContents(
    layerId: string,
    contents: readonly (Omit<NewContent, 'dataKeyId'> & { readonly kid: string; readonly wrapped: Buffer })[],
  ): Promise<{ contentId: string; dataKeyId: string }[]> {
    if (contents.length === 0) return [];
    const rows = await this.rows<{ content_id: string; data_key_id: string }>(
      `with c as (
         select * from unnest($2::varchar[], $3::bytea[], $4::bytea[], $5::int[])
                  with ordinality as c(kid, wrapped, sealed, size, n)
       ), data_keys as (
         insert into config_data_key (kid, wrapped) select c.kid, c.wrapped from c order by c.n
         returning data_key_id
       ), numbered as (
         select data_key_id, row_number() over (order by data_key_id) as n from data_keys
       ), written as (
         insert into config_file_content (layer_id, data_key_id, sealed, size)
         select $1, k.data_key_id, c.sealed, c.size from c join numbered k on k.n = c.n order by c.n
         returning content_id, data_key_id
       )
       select content_id, data_key_id from written order by content_id`,
      [
        layerId,
        contents.map((c) => c.kid),
        contents.map((c) => c.wrapped),
        contents.map((c) => c.sealed),
        contents.map((c) => c.size),
      ],
    );
    // Identity values follow each insert's order, which follows `order by n`.
    return rows.map((r) => ({ contentId: String(r.content_id), dataKeyId: String(r.data_key_id) }));
  }

  /** Stored contents by id (history reads and rollbacks). */
  async contents(ids: readonly string[]): Promise<Map<string, StoredContent>> {
    if (ids.length === 0) return new Map();
    const rows = await this.rows<{ content_id: string; data_key_id: string; sealed: Buffer; size: number }>(
      `select content_id, data_key_id, sealed, size from config_file_content where content_id = any($1::bigint[])`,
      [ids],
    );
    return new Map(
      rows.map((r) => [
        String(r.content_id),
        { contentId: String(r.content_id), dataKeyId: String(r.data_key_id), sealed: r.sealed, size: r.size },
      ]),
    );
  }

  /** Up to `limit` layers (lowest id first) with a plaintext row or version left (`keys:encrypt-existing`). */
  async layersWithPlaintext(limit: number): Promise<{ layerId: string; address: LayerAddress }[]> {
    const rows = await this.manager.query<
      {
        layer_id: string;
        host: string;
        service_id: string | null;
        product_id: string | null;
        product_version: string | null;
        env_tag: string | null;
      }[]
    >(
      `select l.layer_id, l.host, l.service_id, l.product_id, l.product_version, l.env_tag from config_layer l
        where exists (select 1 from config_property p where p.layer_id = l.layer_id and p.sealed is null)
           or exists (select 1 from config_file f where f.layer_id = l.layer_id and f.content_id is null)
           or exists (select 1 from config_layer_version v where v.layer_id = l.layer_id and v.sealed_properties is null)
        order by l.layer_id limit $1`,
      [limit],
    );
    return rows.map((r) => ({
      layerId: String(r.layer_id),
      address: {
        host: r.host,
        serviceId: r.service_id,
        productId: r.product_id,
        productVersion: r.product_version,
        envTag: r.env_tag,
      },
    }));
  }
}

function propertiesOf(rows: readonly PropertyRow[], address: LayerAddress): Map<string, Stored<JsonValue>> {
  const sorted = [...rows].sort((a, b) => compareKeys(a.key, b.key));
  return new Map(sorted.map((r) => [r.key, storedOf(r.value, r.sealed, r.data_key_id, address, r.key)] as const));
}

function filesOf(rows: readonly FileRow[], address: LayerAddress): StoredFile[] {
  const sorted = [...rows].sort((a, b) => compareKeys(a.kind, b.kind) || compareKeys(a.name, b.name));
  return sorted.map((r) => {
    const name = fileValueName(r.kind, r.name);
    const loaded = r.content !== null || r.sealed !== null;
    return {
      kind: r.kind,
      name: r.name,
      contentId: r.content_id === null ? null : String(r.content_id),
      size: r.size,
      value: loaded ? storedOf(r.content, r.sealed, r.data_key_id, address, name) : undefined,
    };
  });
}
