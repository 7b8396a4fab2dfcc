import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';

/**
 * Config history (DESIGN 14): every change of a layer appends an immutable version, numbered like the
 * layer's `aggregate_version` (its ETag, the one counter), holding who, when, why, the names that changed
 * and the layer's whole content then (for `GET history/{version}` and rollback). Layers are no longer
 * removed when emptied: the row keeps the version counter and the history of a deleted layer.
 * The change feed gains `config.changed`, whose host is a config host (up to 128 characters).
 */
export class ConfigHistory1763700013000 implements MigrationInterface {
  name = 'ConfigHistory1763700013000';
  // Expand-then-contract (docs/CONTRIBUTING.md): only adds; the previous release keeps working.
  readonly step: MigrationStep = 'expand';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      create table config_layer_version (
        layer_id      bigint       not null,
        version       integer      not null,
        at            timestamptz  not null default now(),
        actor         varchar(255) null,
        reason        varchar(200) null,
        change        jsonb        not null,
        properties    jsonb        not null,
        files         jsonb        not null,
        file_contents jsonb        not null,
        constraint pk_config_layer_version primary key (layer_id, version),
        constraint fk_config_layer_version_layer foreign key (layer_id)
          references config_layer (layer_id) on delete cascade,
        constraint ck_config_layer_version_version check (version >= 1),
        constraint ck_config_layer_version_change check (jsonb_typeof(change) = 'object'),
        constraint ck_config_layer_version_properties check (jsonb_typeof(properties) = 'object'),
        constraint ck_config_layer_version_files check (jsonb_typeof(files) = 'object'),
        constraint ck_config_layer_version_file_contents check (jsonb_typeof(file_contents) = 'object')
      )`);
    // Pruning by age.
    await db.query(`create index ix_config_layer_version_at on config_layer_version (at)`);
    // Every existing layer's current content becomes its first recorded version (all of it "added").
    await db.query(`
      insert into config_layer_version (layer_id, version, at, actor, reason, change, properties, files, file_contents)
      select l.layer_id, l.aggregate_version, l.update_ts, l.update_user, null,
             jsonb_build_object(
               'added', (select coalesce(jsonb_agg(k order by k collate "C"), '[]') from (
                          select p.property_key as k from config_property p where p.layer_id = l.layer_id
                          union all
                          select f.kind || '/' || f.file_name from config_file f where f.layer_id = l.layer_id) keys),
               'changed', '[]'::jsonb, 'removed', '[]'::jsonb,
               'sha256', (select coalesce(jsonb_object_agg(f.kind || '/' || f.file_name, encode(sha256(f.content), 'hex')), '{}')
                            from config_file f where f.layer_id = l.layer_id)),
             (select coalesce(jsonb_object_agg(p.property_key, p.property_value), '{}')
                from config_property p where p.layer_id = l.layer_id),
             (select jsonb_build_object(
                'cert', coalesce(jsonb_object_agg(f.file_name, encode(sha256(f.content), 'hex')) filter (where f.kind = 'cert'), '{}'),
                'file', coalesce(jsonb_object_agg(f.file_name, encode(sha256(f.content), 'hex')) filter (where f.kind = 'file'), '{}'))
                from config_file f where f.layer_id = l.layer_id),
             (select jsonb_build_object(
                'cert', coalesce(jsonb_object_agg(f.file_name, translate(encode(f.content, 'base64'), E'\\n', '')) filter (where f.kind = 'cert'), '{}'),
                'file', coalesce(jsonb_object_agg(f.file_name, translate(encode(f.content, 'base64'), E'\\n', '')) filter (where f.kind = 'file'), '{}'))
                from config_file f where f.layer_id = l.layer_id)
        from config_layer l`);
    await db.query(`alter table change_event drop constraint ck_change_event_type`);
    await db.query(`
      alter table change_event add constraint ck_change_event_type check (type in ('tag.created', 'tag.updated',
        'tag.deleted', 'entity.created', 'entity.updated', 'entity.deleted', 'entity.tagged', 'entity.untagged',
        'config.changed'))`);
    await db.query(`alter table change_event alter column host_id type varchar(128)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`delete from change_event where type = 'config.changed'`);
    await db.query(`alter table change_event alter column host_id type varchar(22)`);
    await db.query(`alter table change_event drop constraint ck_change_event_type`);
    await db.query(`
      alter table change_event add constraint ck_change_event_type check (type in ('tag.created', 'tag.updated',
        'tag.deleted', 'entity.created', 'entity.updated', 'entity.deleted', 'entity.tagged', 'entity.untagged'))`);
    await db.query(`drop table config_layer_version`);
  }
}
