import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';

/** The `kind/name` → hash pairs of a files snapshot, for diffing beside property keys. */
const flatFiles = (snapshot: string): string => `
  select 'cert/' || e.key as key, e.value from ${snapshot} s, jsonb_each(s.files->'cert') e
  union all
  select 'file/' || e.key, e.value from ${snapshot} s, jsonb_each(s.files->'file') e`;

const byKind = (value: string): string => `jsonb_build_object(
    'cert', coalesce(jsonb_object_agg(file_name, ${value}) filter (where kind = 'cert'), '{}'),
    'file', coalesce(jsonb_object_agg(file_name, ${value}) filter (where kind = 'file'), '{}'))`;

/**
 * `config_layer_append_version(layer, actor, reason, feed lock)` (DESIGN 14): appends the layer's current
 * content as its version `aggregate_version` (the snapshot, the names added, changed and removed since the
 * previous version, file hashes compared), its `config.changed` event (taking the feed's shared lock first,
 * as ChangeEventRepository's append does), and sends `pg_notify('bindery_config', address and version)`,
 * delivered at commit, so never for a rolled-back change. Answers the version and the properties (the
 * write's read-back). One PL/pgSQL call, so a write with history costs one statement more, planned once
 * per session: planning it on every write cost more than running it (bench/config-history.js).
 */
export class ConfigHistoryAppend1763700013500 implements MigrationInterface {
  name = 'ConfigHistoryAppend1763700013500';
  // Expand-then-contract (docs/CONTRIBUTING.md): only adds; the previous release keeps working.
  readonly step: MigrationStep = 'expand';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      create function config_layer_append_version(p_layer bigint, p_actor varchar, p_reason varchar,
                                                  p_feed_lock bigint)
      returns table (version integer, at timestamptz, change jsonb, properties jsonb, host varchar,
                     service_id varchar, product_id varchar, product_version varchar, env_tag varchar)
      language plpgsql as $fn$
      #variable_conflict use_column
      begin
        -- Held until commit: the feed's readers see no seq that may still commit (ChangeEventRepository).
        perform pg_advisory_xact_lock_shared(p_feed_lock);
        return query
        with layer as (
          select l.layer_id, l.aggregate_version, l.host, l.service_id, l.product_id, l.product_version, l.env_tag
            from config_layer l where l.layer_id = p_layer
        ), files as (
          select f.kind, f.file_name, encode(sha256(f.content), 'hex') as sha,
                 translate(encode(f.content, 'base64'), E'\\n', '') as b64
            from config_file f where f.layer_id = p_layer
        ), snapshot as (
          select (select coalesce(jsonb_object_agg(p.property_key, p.property_value), '{}')
                    from config_property p where p.layer_id = p_layer) as properties,
                 (select ${byKind('sha')} from files) as files,
                 (select ${byKind('b64')} from files) as file_contents
        ), before as (
          select v.properties, v.files from config_layer_version v
           where v.layer_id = p_layer order by v.version desc limit 1
        ), now_names as (
          select e.key, e.value from snapshot s, jsonb_each(s.properties) e
          union all ${flatFiles('snapshot')}
        ), then_names as (
          select e.key, e.value from before s, jsonb_each(s.properties) e
          union all ${flatFiles('before')}
        ), diff as (
          select coalesce(jsonb_agg(n.key order by n.key collate "C") filter (where o.key is null), '[]') as added,
                 coalesce(jsonb_agg(n.key order by n.key collate "C")
                            filter (where o.key is not null and n.key is not null and n.value <> o.value), '[]')
                   as changed,
                 coalesce(jsonb_agg(o.key order by o.key collate "C") filter (where n.key is null), '[]') as removed,
                 coalesce(jsonb_object_agg(n.key, n.value)
                            filter (where n.key ~ '^(cert|file)/' and (o.key is null or n.value <> o.value)), '{}')
                   as sha256
            from now_names n full join then_names o on o.key = n.key
        ), written as (
          insert into config_layer_version as v (layer_id, version, actor, reason, change, properties, files,
                                                 file_contents)
          select l.layer_id, l.aggregate_version, p_actor, p_reason,
                 jsonb_build_object('added', d.added, 'changed', d.changed, 'removed', d.removed,
                                    'sha256', d.sha256),
                 s.properties, s.files, s.file_contents
            from layer l, snapshot s, diff d
          returning v.version, v.at, v.change, v.properties
        ), event as (
          insert into change_event (seq, type, actor, host_id, data)
          select nextval('change_event_seq'), 'config.changed', p_actor, l.host,
                 jsonb_build_object('host', l.host, 'serviceId', l.service_id, 'productId', l.product_id,
                   'productVersion', l.product_version, 'envTag', l.env_tag, 'version', w.version,
                   'keys', (select coalesce(jsonb_agg(k order by k collate "C"), '[]') from (
                              select jsonb_array_elements_text(w.change->'added')
                              union select jsonb_array_elements_text(w.change->'changed')
                              union select jsonb_array_elements_text(w.change->'removed')) as keys(k)))
            from written w, layer l
        ), notified as (
          select pg_notify('bindery_config', json_build_object('host', l.host, 'serviceId', l.service_id,
                   'productId', l.product_id, 'productVersion', l.product_version, 'envTag', l.env_tag,
                   'version', w.version)::text)
            from written w, layer l
        )
        select w.version, w.at, w.change, w.properties, l.host, l.service_id, l.product_id, l.product_version,
               l.env_tag
          from written w, layer l, notified;
      end $fn$`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop function config_layer_append_version(bigint, varchar, varchar, bigint)`);
  }
}
