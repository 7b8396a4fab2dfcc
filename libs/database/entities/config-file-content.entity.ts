import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { ConfigDataKey } from './config-data-key.entity.js';
import { ConfigLayer } from './config-layer.entity.js';

/**
 * One file content of a layer, sealed under a data key of its own and stored once however many versions
 * (and the layer's current files) refer to it (DESIGN 14, 17); removed with the last version that does.
 */
@Entity({ name: 'config_file_content' })
@Check('ck_config_file_content_size', 'size >= 0')
@Index('ix_config_file_content_layer', ['layerId'])
@Index('ix_config_file_content_data_key', ['dataKeyId'])
export class ConfigFileContent {
  @PrimaryGeneratedColumn('identity', {
    name: 'content_id',
    type: 'bigint',
    generatedIdentity: 'ALWAYS',
    primaryKeyConstraintName: 'pk_config_file_content',
  })
  contentId!: string;

  @Column({ name: 'layer_id', type: 'bigint' })
  layerId!: string;

  @Column({ name: 'data_key_id', type: 'bigint' })
  dataKeyId!: string;

  /** version | nonce | tag | ciphertext. */
  @Column({ name: 'sealed', type: 'bytea' })
  sealed!: Buffer;

  /** The plaintext's length: the merged-files size limit is judged without decrypting. */
  @Column({ name: 'size', type: 'integer' })
  size!: number;

  @ManyToOne(() => ConfigLayer, { onDelete: 'CASCADE' })
  @JoinColumn({
    name: 'layer_id',
    referencedColumnName: 'layerId',
    foreignKeyConstraintName: 'fk_config_file_content_layer',
  })
  layer?: ConfigLayer;

  @ManyToOne(() => ConfigDataKey)
  @JoinColumn({
    name: 'data_key_id',
    referencedColumnName: 'dataKeyId',
    foreignKeyConstraintName: 'fk_config_file_content_data_key',
  })
  dataKey?: ConfigDataKey;
}
