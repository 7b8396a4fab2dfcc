import { Check, Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * The deployment's one switch for encrypted config writes (DESIGN 17): on from the start in a new
 * deployment, turned on by `keys:encrypt-existing` in one that held plaintext; every api reads it.
 */
@Entity({ name: 'config_encryption' })
@Check('ck_config_encryption_single', 'id')
export class ConfigEncryption {
  @PrimaryColumn({ name: 'id', type: 'boolean', default: true, primaryKeyConstraintName: 'pk_config_encryption' })
  id!: boolean;

  @Column({ name: 'encrypted_writes', type: 'boolean' })
  encryptedWrites!: boolean;
}
