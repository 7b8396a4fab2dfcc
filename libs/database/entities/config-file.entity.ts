import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { ConfigFileContent } from './config-file-content.entity.js';
import { ConfigLayer } from './config-layer.entity.js';
import type { FileKind } from './config-types.js';

/** One cert or file of a layer, stored as bytes and served as base64. */
@Entity({ name: 'config_file' })
@Check('ck_config_file_kind', `kind in ('cert', 'file')`)
@Check('ck_config_file_name', `file_name ~ '^[A-Za-z0-9_][A-Za-z0-9._-]*$'`)
// Plaintext bytes (before `keys:encrypt-existing`) or a sealed content stored once, never both (DESIGN 17).
@Check('ck_config_file_stored', '(content is null) <> (content_id is null)')
@Index('ix_config_file_content_id', ['contentId'])
export class ConfigFile {
  @PrimaryColumn({ name: 'layer_id', type: 'bigint', primaryKeyConstraintName: 'pk_config_file' })
  layerId!: string;

  @PrimaryColumn({ name: 'kind', type: 'varchar', length: 4, primaryKeyConstraintName: 'pk_config_file' })
  kind!: FileKind;

  @PrimaryColumn({ name: 'file_name', type: 'varchar', length: 255, primaryKeyConstraintName: 'pk_config_file' })
  fileName!: string;

  @Column({ name: 'content', type: 'bytea', nullable: true })
  content!: Buffer | null;

  @Column({ name: 'content_id', type: 'bigint', nullable: true })
  contentId!: string | null;

  @ManyToOne(() => ConfigFileContent)
  @JoinColumn({
    name: 'content_id',
    referencedColumnName: 'contentId',
    foreignKeyConstraintName: 'fk_config_file_content',
  })
  stored?: ConfigFileContent;

  /** Its layer, whose deletion removes it (ON DELETE CASCADE); never loaded, the repository reads by `layerId`. */
  @ManyToOne(() => ConfigLayer, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'layer_id', referencedColumnName: 'layerId', foreignKeyConstraintName: 'fk_config_file_layer' })
  layer?: ConfigLayer;
}
