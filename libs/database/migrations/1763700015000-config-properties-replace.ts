import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';

/**
 * `config_layer_replace_properties`: the admin properties write and its version in one call (bench
 * config-history; DESIGN 14 unchanged). The caller has deleted the layer's properties (reading them back for
 * the diff it computes) and passes the new ones with the change and its sorted names; the function inserts
 * the properties, appends the version (their snapshot, the files as the previous version kept them) and the
 * `config.changed` event. Diffing in SQL (jsonb_each, a full join, five sorted aggregates) was most of the
 * generic append's cost; a properties write changes no file, so nothing else needs the database's view.
 */
export class ConfigPropertiesReplace1763700015000 implements MigrationInterface {
  name = 'ConfigPropertiesReplace1763700015000';
  // Expand-then-contract (docs/CONTRIBUTING.md): only adds; the previous release keeps working.
  readonly step: MigrationStep = 'expand';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      create function config_layer_replace_properties(p_layer bigint, p_properties jsonb, p_change jsonb,
                                                      p_keys jsonb, p_actor varchar, p_reason varchar,
                                                      p_feed_lock bigint, p_notify boolean)
      returns table (version integer, at timestamptz)
      language plpgsql as $fn$
      #variable_conflict use_column
      declare
        v_files jsonb;
        v_contents jsonb;
      begin
        insert into config_property (layer_id, property_key, property_value)
          select p_layer, e.key, e.value from jsonb_each(p_properties) e;
        select v.files, v.file_contents into v_files, v_contents
          from config_layer_version v where v.layer_id = p_layer order by v.version desc limit 1;
        -- Every layer has a version since ConfigHistory, but for the one its first write is creating.
        if not found then
          select jsonb_build_object(
                   'cert', coalesce(jsonb_object_agg(f.file_name, encode(sha256(f.content), 'hex')) filter (where f.kind = 'cert'), '{}'),
                   'file', coalesce(jsonb_object_agg(f.file_name, encode(sha256(f.content), 'hex')) filter (where f.kind = 'file'), '{}')),
                 jsonb_build_object(
                   'cert', coalesce(jsonb_object_agg(f.file_name, translate(encode(f.content, 'base64'), E'\\n', '')) filter (where f.kind = 'cert'), '{}'),
                   'file', coalesce(jsonb_object_agg(f.file_name, translate(encode(f.content, 'base64'), E'\\n', '')) filter (where f.kind = 'file'), '{}'))
            into v_files, v_contents
            from config_file f where f.layer_id = p_layer;
        end if;
        -- Held until commit: the feed's readers see no seq that may still commit (ChangeEventRepository).
        perform pg_advisory_xact_lock_shared(p_feed_lock);
        return query
        with layer as (
          select l.layer_id, l.aggregate_version, l.host, l.service_id, l.product_id, l.product_version, l.env_tag
            from config_layer l where l.layer_id = p_layer
        ), written as (
          insert into config_layer_version as v (layer_id, version, actor, reason, change, properties, files,
                                                 file_contents)
          select l.layer_id, l.aggregate_version, p_actor, p_reason, p_change, p_properties, v_files, v_contents
            from layer l
          returning v.version, v.at
        ), event as (
          insert into change_event (seq, type, actor, host_id, data)
          select nextval('change_event_seq'), 'config.changed', p_actor, l.host,
                 jsonb_build_object('host', l.host, 'serviceId', l.service_id, 'productId', l.product_id,
                   'productVersion', l.product_version, 'envTag', l.env_tag, 'version', w.version, 'keys', p_keys)
            from written w, layer l
        ), notified as (
          select pg_notify('bindery_config', json_build_object('host', l.host, 'serviceId', l.service_id,
                   'productId', l.product_id, 'productVersion', l.product_version, 'envTag', l.env_tag,
                   'version', w.version)::text)
            from written w, layer l where p_notify
        )
        select w.version, w.at from written w left join notified on true;
      end $fn$`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(
      `drop function config_layer_replace_properties(bigint, jsonb, jsonb, jsonb, varchar, varchar, bigint, boolean)`,
    );
  }
}
