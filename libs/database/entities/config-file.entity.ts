import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { FileKind } from './config-types.js';

/** One cert or file of a layer, stored as bytes and served as base64. */
@Entity({ name: 'config_file' })
export class ConfigFile {
  @PrimaryColumn({ name: 'layer_id', type: 'bigint', primaryKeyConstraintName: 'pk_config_file' })
  layerId!: string;

  @PrimaryColumn({ name: 'kind', type: 'varchar', length: 4, primaryKeyConstraintName: 'pk_config_file' })
  kind!: FileKind;

  @PrimaryColumn({ name: 'file_name', type: 'varchar', length: 255, primaryKeyConstraintName: 'pk_config_file' })
  fileName!: string;

  @Column({ name: 'content', type: 'bytea' })
  content!: Buffer;
}
