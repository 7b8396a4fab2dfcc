import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A random data key, stored wrapped (AES-256-GCM) under the key encryption key `kid` of the api's key ring
 * (DESIGN 17): one per layer version for its properties, one per stored file content. Rewrapping under a
 * new `kid` changes these rows only, never a value.
 */
@Entity({ name: 'config_data_key' })
@Index('ix_config_data_key_kid', ['kid'])
export class ConfigDataKey {
  @PrimaryGeneratedColumn('identity', {
    name: 'data_key_id',
    type: 'bigint',
    generatedIdentity: 'ALWAYS',
    primaryKeyConstraintName: 'pk_config_data_key',
  })
  dataKeyId!: string;

  @Column({ name: 'kid', type: 'varchar', length: 64 })
  kid!: string;

  /** nonce | tag | ciphertext of the data key. */
  @Column({ name: 'wrapped', type: 'bytea' })
  wrapped!: Buffer;

  @Column({ name: 'created_ts', type: 'timestamptz', default: () => 'now()' })
  createdTs!: Date;
}
