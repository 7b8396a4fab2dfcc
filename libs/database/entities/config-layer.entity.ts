import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { ConfigDataKey } from './config-data-key.entity.js';

/** No leading or trailing white space (a value other than null). */
const TRIMMED = `~ '^\\S(.*\\S)?$'`;

/** One configuration layer's address (table `config_layer`, migration CreateConfig). */
@Entity({ name: 'config_layer' })
// NULLS NOT DISTINCT in the migration (one row per address even with absent parts): TypeORM cannot say it.
@Unique('uq_config_layer_address', ['host', 'serviceId', 'productId', 'productVersion', 'envTag'])
@Check('ck_config_layer_owner', '(service_id is null) <> (product_id is null)')
@Check('ck_config_layer_product', '(product_id is null) = (product_version is null)')
@Check(
  'ck_config_layer_trimmed',
  `host ${TRIMMED} and (service_id is null or service_id ${TRIMMED}) and (product_id is null or product_id ${TRIMMED})` +
    ` and (product_version is null or product_version ${TRIMMED}) and (env_tag is null or env_tag ${TRIMMED})`,
)
@Check('ck_config_layer_version', 'aggregate_version >= 1')
// Product layers are found here; service layers through the unique constraint's index.
@Index('ix_config_layer_product', ['host', 'productId', 'productVersion', 'envTag'], {
  where: 'product_id is not null',
})
@Index('ix_config_layer_data_key', ['dataKeyId'])
// The operators' list order (migration KeysetIndexes): NULLS FIRST on env_tag, which TypeORM cannot declare.
@Index('ix_config_layer_keyset', { synchronize: false })
export class ConfigLayer {
  /** bigint: the pg driver returns it as a string. */
  @PrimaryGeneratedColumn('identity', {
    name: 'layer_id',
    type: 'bigint',
    generatedIdentity: 'ALWAYS',
    primaryKeyConstraintName: 'pk_config_layer',
  })
  layerId!: string;

  @Column({ name: 'host', type: 'varchar', length: 128 })
  host!: string;

  @Column({ name: 'service_id', type: 'varchar', length: 128, nullable: true })
  serviceId!: string | null;

  @Column({ name: 'product_id', type: 'varchar', length: 128, nullable: true })
  productId!: string | null;

  @Column({ name: 'product_version', type: 'varchar', length: 64, nullable: true })
  productVersion!: string | null;

  @Column({ name: 'env_tag', type: 'varchar', length: 64, nullable: true })
  envTag!: string | null;

  @Column({ name: 'update_user', type: 'varchar', length: 255, nullable: true })
  updateUser!: string | null;

  @Column({ name: 'update_ts', type: 'timestamptz', default: () => 'now()' })
  updateTs!: Date;

  /** Moves on with every write to the layer (properties or files): its ETag. */
  @Column({ name: 'aggregate_version', type: 'integer', default: 1 })
  aggregateVersion!: number;

  /** The data key its sealed properties are under: its current version's (DESIGN 17); null while plaintext. */
  @Column({ name: 'data_key_id', type: 'bigint', nullable: true })
  dataKeyId!: string | null;

  @ManyToOne(() => ConfigDataKey)
  @JoinColumn({
    name: 'data_key_id',
    referencedColumnName: 'dataKeyId',
    foreignKeyConstraintName: 'fk_config_layer_data_key',
  })
  dataKey?: ConfigDataKey;
}
