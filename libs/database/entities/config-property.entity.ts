import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { JsonValue } from './config-types.js';

/** One `configName.propertyName` of a layer; the value is jsonb so it keeps its type. */
@Entity({ name: 'config_property' })
export class ConfigProperty {
  @PrimaryColumn({ name: 'layer_id', type: 'bigint', primaryKeyConstraintName: 'pk_config_property' })
  layerId!: string;

  @PrimaryColumn({ name: 'property_key', type: 'varchar', length: 255, primaryKeyConstraintName: 'pk_config_property' })
  propertyKey!: string;

  @Column({ name: 'property_value', type: 'jsonb' })
  propertyValue!: JsonValue;
}
