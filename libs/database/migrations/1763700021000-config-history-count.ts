import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';

/**
 * A layer's history `total` without counting its versions (DESIGN 14; bench scale: the first history page of a
 * layer with 100,000 versions was 2.25× slower than with 1,000): `config_history_count` holds each layer's
 * number of kept versions, kept by triggers on `config_layer_version` in the writing transaction. One row per
 * layer, no shards: a version is appended under the layer's row lock already, so writers never queue on it.
 */
export class ConfigHistoryCount1763700021000 implements MigrationInterface {
  name = 'ConfigHistoryCount1763700021000';
  // Expand-then-contract (docs/CONTRIBUTING.md): only adds; the previous release's appends are counted too.
  readonly step: MigrationStep = 'expand';

  async up(db: QueryRunner): Promise<void> {
    // No foreign key to config_layer: a deleted layer's versions are counted down after its row is gone.
    await db.query(`
      create table config_history_count (
        layer_id bigint not null,
        versions bigint      not null,
        constraint pk_config_history_count primary key (layer_id)
      )`);
    // Appends and the pruner wait until the triggers exist and the counts are filled.
    await db.query(`lock table config_layer_version in share row exclusive mode`);
    // Versions of a layer deleted in this transaction (its cascade) are not counted: its counter is forgotten.
    await db.query(`
      create function config_history_count_apply() returns trigger language plpgsql as $$
      begin
        insert into config_history_count as c (layer_id, versions)
          select layer_id, count(*) * tg_argv[0]::int from changed
           where exists (select 1 from config_layer l where l.layer_id = changed.layer_id)
           group by 1 order by 1
          on conflict on constraint pk_config_history_count do update set versions = c.versions + excluded.versions;
        return null;
      end $$`);
    await db.query(`create function config_history_count_cleared() returns trigger language plpgsql as $$
      begin
        delete from config_history_count;
        return null;
      end $$`);
    // A deleted layer's count goes with it; its versions' cascade, before or after this, counts nothing (above).
    await db.query(`create function config_history_count_forget() returns trigger language plpgsql as $$
      begin
        delete from config_history_count c using gone where c.layer_id = gone.layer_id;
        return null;
      end $$`);
    await db.query(`create trigger tr_config_history_count_insert after insert on config_layer_version
      referencing new table as changed for each statement execute function config_history_count_apply('1')`);
    await db.query(`create trigger tr_config_history_count_delete after delete on config_layer_version
      referencing old table as changed for each statement execute function config_history_count_apply('-1')`);
    await db.query(`create trigger tr_config_history_count_truncate after truncate on config_layer_version
      for each statement execute function config_history_count_cleared()`);
    await db.query(`create trigger tr_config_history_count_forget after delete on config_layer
      referencing old table as gone for each statement execute function config_history_count_forget()`);
    await db.query(`insert into config_history_count (layer_id, versions)
      select layer_id, count(*) from config_layer_version group by 1`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop trigger tr_config_history_count_forget on config_layer`);
    await db.query(`drop trigger tr_config_history_count_truncate on config_layer_version`);
    await db.query(`drop trigger tr_config_history_count_delete on config_layer_version`);
    await db.query(`drop trigger tr_config_history_count_insert on config_layer_version`);
    await db.query(
      `drop function config_history_count_forget, config_history_count_cleared, config_history_count_apply`,
    );
    await db.query(`drop table config_history_count`);
  }
}
