import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';
import { ConfigHistoryAppend1763700013500 } from './1763700013500-config-history-append.js';

/** The `kind/name` → hash pairs of a files snapshot (`files` column or variable), for the diff. */
const flatFiles = (files: string, from: string): string => `
  select 'cert/' || e.key as key, e.value from ${from} jsonb_each(${files}->'cert') e
  union all
  select 'file/' || e.key, e.value from ${from} jsonb_each(${files}->'file') e`;

const byKind = (value: string): string => `jsonb_build_object(
    'cert', coalesce(jsonb_object_agg(file_name, ${value}) filter (where kind = 'cert'), '{}'),
    'file', coalesce(jsonb_object_agg(file_name, ${value}) filter (where kind = 'file'), '{}'))`;

/**
 * A cheaper `config_layer_append_version` (bench config-history; DESIGN 14 unchanged):
 * - `p_notify`: the api (which has a control session) passes false and sends the NOTIFY itself right after
 *   the commit (ConfigHistoryRepository). Inside a transaction a NOTIFY takes a database-wide lock from the
 *   start of its commit until the commit is flushed, so notifying writers committed one at a time, without
 *   group commit. Writers without a control session (config:import, the dev seed) still pass true.
 * - `p_files`: false when the change wrote no file (properties writes): the version keeps the previous
 *   version's file hashes and contents instead of hashing and base64-encoding every file again.
 * - The diff reads the layer's property rows once (for the snapshot and the diff), and the event's keys
 *   come from the diff instead of unnesting the stored change again.
 */
export class ConfigHistoryLeanAppend1763700014100 implements MigrationInterface {
  name = 'ConfigHistoryLeanAppend1763700014100';
  // Contract: drops the append function's old signature, which only the release before this one called.
  readonly step: MigrationStep = 'contract';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`drop function config_layer_append_version(bigint, varchar, varchar, bigint)`);
    await db.query(`
      create function config_layer_append_version(p_layer bigint, p_actor varchar, p_reason varchar,
                                                  p_feed_lock bigint, p_notify boolean, p_files boolean)
      returns table (version integer, at timestamptz, change jsonb, properties jsonb, host varchar,
                     service_id varchar, product_id varchar, product_version varchar, env_tag varchar)
      language plpgsql as $fn$
      #variable_conflict use_column
      declare
        v_before_properties jsonb;
        v_before_files jsonb;
        v_files jsonb;
        v_contents jsonb;
      begin
        -- Held until commit: the feed's readers see no seq that may still commit (ChangeEventRepository).
        perform pg_advisory_xact_lock_shared(p_feed_lock);
        select v.properties, v.files, v.file_contents into v_before_properties, v_before_files, v_contents
          from config_layer_version v where v.layer_id = p_layer order by v.version desc limit 1;
        -- The previous version holds the files as they are unless this change wrote some (or there is none).
        if found and not p_files then
          v_files := v_before_files;
        else
          select ${byKind('sha')}, ${byKind('b64')} into v_files, v_contents
            from (select f.kind, f.file_name, encode(sha256(f.content), 'hex') as sha,
                         translate(encode(f.content, 'base64'), E'\\n', '') as b64
                    from config_file f where f.layer_id = p_layer) as files;
        end if;
        return query
        with layer as (
          select l.layer_id, l.aggregate_version, l.host, l.service_id, l.product_id, l.product_version, l.env_tag
            from config_layer l where l.layer_id = p_layer
        ), now_properties as materialized (
          select p.property_key as key, p.property_value as value from config_property p where p.layer_id = p_layer
        ), now_names as (
          select n.key, n.value from now_properties n
          union all ${flatFiles('v_files', '')}
        ), then_names as (
          select e.key, e.value from jsonb_each(v_before_properties) e
          union all ${flatFiles('v_before_files', '')}
        ), names as (
          select coalesce(n.key, o.key) as key, n.value,
                 case when o.key is null then 'added' when n.key is null then 'removed'
                      when n.value <> o.value then 'changed' end as how
            from now_names n full join then_names o on o.key = n.key
        ), diff as (
          select coalesce(jsonb_agg(key order by key collate "C") filter (where how = 'added'), '[]') as added,
                 coalesce(jsonb_agg(key order by key collate "C") filter (where how = 'changed'), '[]') as changed,
                 coalesce(jsonb_agg(key order by key collate "C") filter (where how = 'removed'), '[]') as removed,
                 coalesce(jsonb_agg(key order by key collate "C") filter (where how is not null), '[]') as keys,
                 coalesce(jsonb_object_agg(key, value)
                            filter (where key ~ '^(cert|file)/' and how in ('added', 'changed')), '{}') as sha256
            from names
        ), written as (
          insert into config_layer_version as v (layer_id, version, actor, reason, change, properties, files,
                                                 file_contents)
          select l.layer_id, l.aggregate_version, p_actor, p_reason,
                 jsonb_build_object('added', d.added, 'changed', d.changed, 'removed', d.removed,
                                    'sha256', d.sha256),
                 (select coalesce(jsonb_object_agg(n.key, n.value), '{}') from now_properties n), v_files, v_contents
            from layer l, diff d
          returning v.version, v.at, v.change, v.properties
        ), event as (
          insert into change_event (seq, type, actor, host_id, data)
          select nextval('change_event_seq'), 'config.changed', p_actor, l.host,
                 jsonb_build_object('host', l.host, 'serviceId', l.service_id, 'productId', l.product_id,
                   'productVersion', l.product_version, 'envTag', l.env_tag, 'version', w.version, 'keys', d.keys)
            from written w, layer l, diff d
        ), notified as (
          select pg_notify('bindery_config', json_build_object('host', l.host, 'serviceId', l.service_id,
                   'productId', l.product_id, 'productVersion', l.product_version, 'envTag', l.env_tag,
                   'version', w.version)::text)
            from written w, layer l where p_notify
        )
        select w.version, w.at, w.change, w.properties, l.host, l.service_id, l.product_id, l.product_version,
               l.env_tag
          from written w cross join layer l left join notified on true;
      end $fn$`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop function config_layer_append_version(bigint, varchar, varchar, bigint, boolean, boolean)`);
    await new ConfigHistoryAppend1763700013500().up(db);
  }
}
