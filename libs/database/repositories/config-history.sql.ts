import { Keyset, type PageWindow } from '../keyset.js';
import { bind } from '../repository.js';

/**
 * Appends the layer's current content as its version, with the names that changed and its `config.changed`
 * event, and when $5 the NOTIFY the push listens for (delivered at commit); $6 false: the change wrote no
 * file, the previous version's are kept. Function `config_layer_append_version`, migration
 * ConfigHistoryLeanAppend.
 */
export const APPEND = `
  select version, at, change, properties, host, service_id, product_id, product_version, env_tag
    from config_layer_append_version($1, $2, $3, $4, $5, $6)`;

/** Deletes the layer's ($1) properties, answering them: what a replace removes, for its diff. */
export const REMOVE_PROPERTIES = `
  with gone as (delete from config_property where layer_id = $1 returning property_key, property_value)
  select property_key as key, property_value as value from gone`;

/** Inserts the properties $2, then appends the version and its event (see `replaceProperties`). */
export const REPLACE_PROPERTIES = `select version, at from config_layer_replace_properties($1, $2, $3, $4, $5, $6, $7, $8)`;

/**
 * Version `v` refers to file content `c` (its `file_refs` hold ids as text or numbers). `jsonb_path_exists`, not
 * `jsonb_each`: the planner guesses 100 rows per set-returning call, costed a layer's thousand versions past
 * `jit_above_cost`, and JIT-compiled the statement on every run (0.6 s each).
 */
const REFERS_TO_CONTENT = `jsonb_path_exists(v.file_refs, '$.*.* ? (@ == $id || @ == $n)',
  jsonb_build_object('id', c.content_id::text, 'n', c.content_id))`;

/**
 * Deletes versions older than $1 days, keeping the last $2 of every layer whatever their age, and every
 * version beyond a layer's last $3. Versions are numbered without gaps up to the layer's
 * `aggregate_version`, so the last $2 are those above it minus $2. With them go the file contents that
 * only they referred to (DESIGN 14): the statement's snapshot still shows the deleted versions, so they
 * are left out by name.
 */
export const PRUNE = `
  with gone as (
    delete from config_layer_version v using config_layer l
     where v.layer_id = l.layer_id
       and ((v.at < now() - $1 * interval '1 day' and v.version <= l.aggregate_version - $2)
            or v.version <= l.aggregate_version - $3)
    returning v.layer_id, v.version
  ), contents as (
    delete from config_file_content c
     where c.layer_id in (select layer_id from gone)
       and not exists (select 1 from config_file f where f.content_id = c.content_id)
       and not exists (
         select 1 from config_layer_version v
          where v.layer_id = c.layer_id
            and ${REFERS_TO_CONTENT}
            and not exists (select 1 from gone g where g.layer_id = v.layer_id and g.version = v.version))
    returning 1
  )
  select (select count(*)::int from gone) as pruned, (select count(*)::int from contents) as contents`;

/**
 * CONFIG_HISTORY_MAX_VERSIONS in the writing transaction (DESIGN 14): deletes the layer's ($1) versions up to
 * $2, answering the file references they held (`DROP_LAYER_CONTENTS` then removes those no one holds).
 */
export const PRUNE_LAYER_VERSIONS = `
  delete from config_layer_version where layer_id = $1 and version <= $2 returning file_refs`;

/** Deletes the layer's ($1) file contents among $2 that neither a current file nor a kept version refers to. */
export const DROP_LAYER_CONTENTS = `
  delete from config_file_content c
   where c.layer_id = $1 and c.content_id = any($2::bigint[])
     and not exists (select 1 from config_file f where f.content_id = c.content_id)
     and not exists (
       select 1 from config_layer_version v
        where v.layer_id = $1
          and ${REFERS_TO_CONTENT})`;

/**
 * Deletes the data keys nothing refers to (their versions and contents pruned). A key is made in the
 * transaction that stores what it seals, so a committed key without a reference is no longer needed.
 */
export const DROP_UNUSED_KEYS = `
  with gone as (
    delete from config_data_key d
     where not exists (select 1 from config_layer l where l.data_key_id = d.data_key_id)
       and not exists (select 1 from config_layer_version v where v.data_key_id = d.data_key_id)
       and not exists (select 1 from config_file_content c where c.data_key_id = d.data_key_id)
    returning 1
  )
  select count(*)::int as dropped from gone`;

/**
 * A sealed write of a layer ($1, by $2 for reason $3) in one statement (DESIGN 17): stores the version's
 * data key ($5 wrapped under kid $4) as the layer's, makes the properties exactly those of $6 (key to the
 * value sealed under it, base64), points the files of kinds $11 at the stored contents ($12 kinds, $13
 * names, $14 ids), and appends the current `aggregate_version` with the change $7 (worked out by the api
 * from decrypted content), $6 as its properties, file references $8, its `config.changed` event naming $9
 * and, when $10, the NOTIFY (delivered at commit). The feed's lock ($15, shared, held to commit) comes
 * before the event's seq: the event's rows are joined with `feed`, so none is projected before the lock is
 * held. Properties and files are upserted and the rest deleted, so no sub-statement writes a row another
 * does; a re-sealed property changes no indexed column, so it is updated in place (HOT).
 */
export const WRITE_SEALED = `
  with feed as materialized (
    select pg_advisory_xact_lock_shared($15) as locked
  ), data_key as (
    insert into config_data_key (kid, wrapped) values ($4, $5) returning data_key_id
  ), sealed as (
    select e.key, decode(e.value, 'base64') as value from jsonb_each_text($6::jsonb) as e
  ), properties_gone as (
    delete from config_property p
     where p.layer_id = $1 and not exists (select 1 from sealed s where s.key = p.property_key)
  ), properties as (
    insert into config_property as p (layer_id, property_key, sealed)
    select $1, s.key, s.value from sealed s
    on conflict on constraint pk_config_property do update set sealed = excluded.sealed, property_value = null
  ), layer_key as (
    update config_layer l set data_key_id = k.data_key_id from data_key k where l.layer_id = $1
  ), refs as (
    select * from unnest($12::varchar[], $13::varchar[], $14::bigint[]) as r(kind, name, content_id)
  ), files_gone as (
    delete from config_file f
     where f.layer_id = $1 and f.kind = any($11::varchar[])
       and not exists (select 1 from refs r where r.kind = f.kind and r.name = f.file_name)
  ), files as (
    insert into config_file as f (layer_id, kind, file_name, content_id)
    select $1, r.kind, r.name, r.content_id from refs r
    on conflict on constraint pk_config_file do update set content_id = excluded.content_id, content = null
    where f.content_id is distinct from excluded.content_id or f.content is not null
  ), layer as (
    select l.layer_id, l.aggregate_version, l.host, l.service_id, l.product_id, l.product_version, l.env_tag
      from config_layer l where l.layer_id = $1
  ), written as (
    insert into config_layer_version as v (layer_id, version, actor, reason, change, data_key_id,
                                           sealed_properties, file_refs)
    select l.layer_id, l.aggregate_version, $2, $3, $7, k.data_key_id, $6, $8 from layer l, data_key k
    returning v.version, v.at
  ), event as (
    insert into change_event (seq, type, actor, host_id, data)
    select nextval('change_event_seq'), 'config.changed', $2, l.host,
           jsonb_build_object('host', l.host, 'serviceId', l.service_id, 'productId', l.product_id,
             'productVersion', l.product_version, 'envTag', l.env_tag, 'version', w.version, 'keys', $9::jsonb)
      from feed f, written w, layer l
  ), notified as (
    select pg_notify('bindery_config', json_build_object('host', l.host, 'serviceId', l.service_id,
             'productId', l.product_id, 'productVersion', l.product_version, 'envTag', l.env_tag,
             'version', w.version)::text)
      from written w, layer l where $10
  )
  select w.version, w.at, k.data_key_id from written w cross join data_key k left join notified on true`;

/** One version ($2) of a layer ($1) as stored, plaintext or sealed; contents ($3) only when asked for. */
export const STORED_VERSION = `
  select version, at, actor, reason, change, properties, files,
         case when $3 then file_contents end as file_contents, data_key_id, sealed_properties, file_refs
    from config_layer_version where layer_id = $1 and version = $2`;

/** A layer's versions in the order of its history list: newest first (the primary key, read backwards). */
export const HISTORY_KEYSET = new Keyset([{ sql: 'version', type: 'integer', descending: true }]);

/** The page of `window` of the layer's versions (one row more: whether an older one follows). */
export function historyPage(layerId: string, window: PageWindow): [string, unknown[]] {
  const parameters: unknown[] = [layerId];
  const after =
    window.after === undefined ? '' : `and ${HISTORY_KEYSET.after(window.after, (v) => bind(parameters, v))}`;
  return [
    `select version, at, actor, reason, change, file_refs as "fileRefs", ${HISTORY_KEYSET.select()}
       from config_layer_version where layer_id = $1 ${after}
      order by ${HISTORY_KEYSET.orderBy()}
     offset ${bind(parameters, window.offset)} limit ${bind(parameters, window.limit + 1)}`,
    parameters,
  ];
}

/** The layer's kept versions, from the counter its triggers keep (migration ConfigHistoryCount). */
export const COUNT_VERSIONS =
  'select coalesce((select versions from config_history_count where layer_id = $1), 0)::int as total';

/** A layer's ($1) plaintext versions (before `keys:encrypt-existing`), oldest first. */
export const PLAINTEXT_VERSIONS = `
  select version, properties, file_contents as "fileContents" from config_layer_version
   where layer_id = $1 and sealed_properties is null order by version`;

/** Replaces the layer's ($1) plaintext versions by their sealed forms ($2); stored digests go (read-time now). */
export const SEAL_VERSIONS = `
  update config_layer_version v
     set properties = null, files = null, file_contents = null, data_key_id = s."dataKeyId",
         sealed_properties = s."sealedProperties", file_refs = s."fileRefs",
         change = v.change || '{"sha256": {}}'::jsonb
    from jsonb_to_recordset($2::jsonb)
      as s(version int, "dataKeyId" bigint, "sealedProperties" jsonb, "fileRefs" jsonb)
   where v.layer_id = $1 and v.version = s.version`;
