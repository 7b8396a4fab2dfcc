import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';

/**
 * A layer's sealed properties are all under one data key, its current version's (DESIGN 17), so the key is
 * named once, on the layer, instead of on every property row: a write re-seals each value without
 * changing an indexed column, so its rows update in place (HOT) with no index entry or foreign-key check
 * each (bench config-history).
 */
export class ConfigLayerDataKey1763700016500 implements MigrationInterface {
  name = 'ConfigLayerDataKey1763700016500';
  // Contract: drops config_property.data_key_id, added by ConfigEncryption1763700016000 in this same
  // unreleased release; no release ever read or wrote it (v0.44.0, the previous one, predates it).
  readonly step: MigrationStep = 'contract';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      alter table config_layer add column data_key_id bigint
        constraint fk_config_layer_data_key references config_data_key (data_key_id)`);
    await db.query(`create index ix_config_layer_data_key on config_layer (data_key_id)`);
    // Every writer seals a layer's properties under one key; two would mean rows this cannot move.
    await db.query(`
      do $$ begin
        if exists (select 1 from config_property where data_key_id is not null
                    group by layer_id having count(distinct data_key_id) > 1) then
          raise exception 'a config layer has properties sealed under two data keys';
        end if;
      end $$`);
    await db.query(`
      update config_layer l set data_key_id = p.data_key_id
        from (select distinct layer_id, data_key_id from config_property where data_key_id is not null) p
       where p.layer_id = l.layer_id`);
    await db.query(`alter table config_property drop constraint ck_config_property_stored, drop column data_key_id`);
    await db.query(`
      alter table config_property
        add constraint ck_config_property_stored check ((property_value is null) <> (sealed is null))`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`
      alter table config_property drop constraint ck_config_property_stored,
        add column data_key_id bigint constraint fk_config_property_data_key references config_data_key (data_key_id)`);
    await db.query(`
      update config_property p set data_key_id = l.data_key_id
        from config_layer l where l.layer_id = p.layer_id and p.sealed is not null`);
    await db.query(`
      alter table config_property add constraint ck_config_property_stored
        check ((property_value is null) <> (sealed is null) and (sealed is null) = (data_key_id is null))`);
    await db.query(`create index ix_config_property_data_key on config_property (data_key_id)`);
    await db.query(`drop index ix_config_layer_data_key`);
    await db.query(`alter table config_layer drop column data_key_id`);
  }
}
