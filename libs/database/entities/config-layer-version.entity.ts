import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { ConfigDataKey } from './config-data-key.entity.js';
import { ConfigLayer } from './config-layer.entity.js';
import type { JsonValue } from './config-types.js';

/** Names that changed in one version: property keys, and `cert/<name>` / `file/<name>` with each new file's hash. */
export interface LayerChange {
  readonly added: string[];
  readonly changed: string[];
  readonly removed: string[];
  /** SHA-256 (lowercase hex) of each added or changed file, by `kind/name`. */
  readonly sha256: Record<string, string>;
}

/** A layer's files by kind: name to SHA-256 hex (`files`) or to base64 content (`file_contents`). */
export interface FilesByKind<T> {
  readonly cert: Record<string, T>;
  readonly file: Record<string, T>;
}

/**
 * One immutable version of a config layer (table `config_layer_version`, migration ConfigHistory, DESIGN
 * 14): written in the transaction of the change, numbered as the layer's `aggregate_version` then.
 */
@Entity({ name: 'config_layer_version' })
@Check('ck_config_layer_version_version', 'version >= 1')
@Check('ck_config_layer_version_change', `jsonb_typeof(change) = 'object'`)
@Check('ck_config_layer_version_properties', `jsonb_typeof(properties) = 'object'`)
@Check('ck_config_layer_version_files', `jsonb_typeof(files) = 'object'`)
@Check('ck_config_layer_version_file_contents', `jsonb_typeof(file_contents) = 'object'`)
// Plaintext (before `keys:encrypt-existing`) or sealed properties and file references, never both (DESIGN 17).
@Check(
  'ck_config_layer_version_stored',
  `(properties is null) <> (sealed_properties is null) and (sealed_properties is null) = (data_key_id is null)` +
    ` and (file_contents is null) <> (file_refs is null)` +
    ` and (sealed_properties is null or jsonb_typeof(sealed_properties) = 'object')` +
    ` and (file_refs is null or jsonb_typeof(file_refs) = 'object')`,
)
// Pruning by age.
@Index('ix_config_layer_version_at', ['at'])
@Index('ix_config_layer_version_data_key', ['dataKeyId'])
export class ConfigLayerVersion {
  @PrimaryColumn({ name: 'layer_id', type: 'bigint', primaryKeyConstraintName: 'pk_config_layer_version' })
  layerId!: string;

  @PrimaryColumn({ name: 'version', type: 'integer', primaryKeyConstraintName: 'pk_config_layer_version' })
  version!: number;

  @Column({ name: 'at', type: 'timestamptz', default: () => 'now()' })
  at!: Date;

  /** The token's `sub` (or the command's name for `config:import`). */
  @Column({ name: 'actor', type: 'varchar', length: 255, nullable: true })
  actor!: string | null;

  /** `X-Change-Reason`, or null. */
  @Column({ name: 'reason', type: 'varchar', length: 200, nullable: true })
  reason!: string | null;

  /** Names only, never values. */
  @Column({ name: 'change', type: 'jsonb' })
  change!: LayerChange;

  /** The layer's properties after this version (never in history lists or events). */
  @Column({ name: 'properties', type: 'jsonb', nullable: true })
  properties!: Record<string, JsonValue> | null;

  @Column({ name: 'files', type: 'jsonb', nullable: true })
  files!: FilesByKind<string> | null;

  /** Base64 contents, read only for rollback and `include=files`. */
  @Column({ name: 'file_contents', type: 'jsonb', nullable: true })
  fileContents!: FilesByKind<string> | null;

  /** The data key its sealed properties are under. */
  @Column({ name: 'data_key_id', type: 'bigint', nullable: true })
  dataKeyId!: string | null;

  /** Property key to its sealed value (base64), AAD the layer address and the key. */
  @Column({ name: 'sealed_properties', type: 'jsonb', nullable: true })
  sealedProperties!: Record<string, string> | null;

  /** Each file's stored content (`config_file_content`), by kind and name; contents are shared, not copied. */
  @Column({ name: 'file_refs', type: 'jsonb', nullable: true })
  fileRefs!: FilesByKind<string> | null;

  @ManyToOne(() => ConfigDataKey)
  @JoinColumn({
    name: 'data_key_id',
    referencedColumnName: 'dataKeyId',
    foreignKeyConstraintName: 'fk_config_layer_version_data_key',
  })
  dataKey?: ConfigDataKey;

  /** Its layer; layers are not deleted, but if one were its history would go with it. */
  @ManyToOne(() => ConfigLayer, { onDelete: 'CASCADE' })
  @JoinColumn({
    name: 'layer_id',
    referencedColumnName: 'layerId',
    foreignKeyConstraintName: 'fk_config_layer_version_layer',
  })
  layer?: ConfigLayer;
}
