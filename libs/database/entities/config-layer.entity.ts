import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** One configuration layer's address (table `config_layer`, migration CreateConfig). */
@Entity({ name: 'config_layer' })
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

  @Column({ name: 'update_ts', type: 'timestamptz' })
  updateTs!: Date;

  /** Moves on with every write to the layer (properties or files): its ETag. */
  @Column({ name: 'aggregate_version', type: 'integer' })
  aggregateVersion!: number;
}
