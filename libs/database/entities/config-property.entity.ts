import { Check, Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { ConfigLayer } from './config-layer.entity.js';
import type { JsonValue } from './config-types.js';

/** One `configName.propertyName` of a layer; the value is jsonb so it keeps its type. */
@Entity({ name: 'config_property' })
@Check('ck_config_property_key', `property_key ~ '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*$'`)
@Check('ck_config_property_value', `jsonb_typeof(property_value) <> 'null'`)
// Plaintext (before `keys:encrypt-existing`) or sealed under its layer's data key, never both (DESIGN 17).
@Check('ck_config_property_stored', '(property_value is null) <> (sealed is null)')
export class ConfigProperty {
  @PrimaryColumn({ name: 'layer_id', type: 'bigint', primaryKeyConstraintName: 'pk_config_property' })
  layerId!: string;

  @PrimaryColumn({ name: 'property_key', type: 'varchar', length: 255, primaryKeyConstraintName: 'pk_config_property' })
  propertyKey!: string;

  @Column({ name: 'property_value', type: 'jsonb', nullable: true })
  propertyValue!: JsonValue | null;

  /** The value's JSON text sealed under the layer's `dataKeyId` with the layer address and key as AAD. */
  @Column({ name: 'sealed', type: 'bytea', nullable: true })
  sealed!: Buffer | null;

  /** Its layer, whose deletion removes it (ON DELETE CASCADE); never loaded, the repository reads by `layerId`. */
  @ManyToOne(() => ConfigLayer, { onDelete: 'CASCADE' })
  @JoinColumn({
    name: 'layer_id',
    referencedColumnName: 'layerId',
    foreignKeyConstraintName: 'fk_config_property_layer',
  })
  layer?: ConfigLayer;
}
