import { Keyset, type KeyValue } from '../keyset.js';
import { bind, bindHost, hostCondition, visibilityCondition, type HostVisibility } from '../repository.js';

/** An entity a batch holds (`lockEntities`): its host and its version when locked. */
export interface LockedEntity {
  readonly entityType: string;
  readonly entityId: string;
  readonly hostId: string | null;
  readonly aggregateVersion: number;
}

/** One link of a batch's changes (links added also carry their entity's host). */
interface BatchLink {
  readonly entityType: string;
  readonly entityId: string;
  readonly tagId: string;
}

/** A batch's net changes (`applyBatch`): links removed and added, and the entities' new versions. */
export interface LinkBatch {
  readonly removed: readonly BatchLink[];
  readonly added: readonly (BatchLink & { readonly entityHostId: string | null })[];
  readonly versions: readonly {
    readonly entityType: string;
    readonly entityId: string;
    readonly aggregateVersion: number;
    readonly updateUser: string | null;
    readonly updateTs: Date;
  }[];
}

/** An entity table as a statement names it. */
export interface NamedTable {
  readonly entityType: string;
  /** The table's name. */
  readonly name: string;
  /** Its id column. */
  readonly id: string;
}

/** A statement and its parameters, as `manager.query` takes them. */
export type Statement = [string, unknown[]];

/** `link`'s statement: inserts the links ($4) not there yet, answers those added and how many the entity had. */
export const LINK_TAGS = `with ins as (
    insert into entity_tag (entity_type, entity_id, entity_host_id, tag_id) select $1, $2, $3, unnest($4::varchar[])
    on conflict do nothing returning tag_id
  )
  select array(select tag_id from ins) as added,
    (select count(*)::int from entity_tag where entity_type = $1 and entity_id = $2) as before`;

/** `linksOfMany`' statement: the tag ids of each entity ($1[i], $2[i]) that has links. */
export const LINKS_OF_MANY = `select et.entity_type as "entityType", et.entity_id as "entityId",
    array_agg(et.tag_id) as "tagIds"
  from entity_tag et
  where (et.entity_type, et.entity_id) in (select * from unnest($1::varchar[], $2::varchar[]))
  group by et.entity_type, et.entity_id`;

/**
 * `detachTag`'s two statements: `lock` locks the entities linked to the tag, in id order within each type and
 * types in a fixed order (concurrent deletions of tags lock shared entities alike); `remove` removes the links
 * and bumps exactly the entities they belonged to, answering them by type then id.
 */
export function detachTagStatements(
  tables: readonly NamedTable[],
  tagId: string,
  audit: { readonly updateUser: string | null; readonly updateTs: Date },
): { lock: Statement; remove: Statement } {
  const named = tables.map((table, i) => ({ alias: `t${i}`, n: i, table: table.name, id: table.id }));
  const types = tables.map((table) => table.entityType);
  const locks = named.map(
    ({ alias, n, table, id }) =>
      `${alias} as (select e.${id} from ${table} e
         where e.${id} in (select entity_id from entity_tag where tag_id = $1 and entity_type = $${n + 2})
         order by e.${id} for update of e)`,
  );
  const bumps = named.map(
    ({ alias, n, table, id }) =>
      `${alias} as (update ${table} e set update_user = $2, update_ts = $3, aggregate_version = e.aggregate_version + 1
         from gone g where g.entity_type = $${n + 4} and e.${id} = g.entity_id
         returning g.entity_type, g.entity_id, e.host_id)`,
  );
  return {
    lock: [
      `with ${locks.join(', ')} select ${named.map(({ alias }) => `(select count(*) from ${alias})`).join(' + ')} as n`,
      [tagId, ...types],
    ],
    remove: [
      `with gone as (
         delete from entity_tag where tag_id = $1 and entity_type = any($${types.length + 4}::varchar[])
         returning entity_type, entity_id
       ), ${bumps.join(', ')}
       select entity_type as "entityType", entity_id as "entityId", host_id as "hostId"
       from (${named.map(({ alias }) => `select * from ${alias}`).join(' union all ')}) u
       order by entity_type, entity_id`,
      [tagId, audit.updateUser, audit.updateTs, ...types, types],
    ],
  };
}

/**
 * `lockEntities`' statement: each table's existing entities among its ids visible under `visibility`, locked in
 * id order. The host is part of the locking scan, so another host's row is never waited for.
 */
export function lockEntitiesStatement(
  tables: readonly (NamedTable & { readonly ids: readonly string[] })[],
  visibility: HostVisibility,
): Statement {
  const parameters: unknown[] = [];
  const host = bindHost(visibility, parameters);
  const locks = tables.map(({ entityType, name, id, ids }, i) => {
    const type = bind(parameters, entityType);
    const visible = hostCondition(visibility, 'e.host_id', host);
    return `t${i} as (select ${type}::varchar as entity_type, e.${id} as entity_id, e.host_id, e.aggregate_version
      from ${name} e where e.${id} = any(${bind(parameters, ids)}::varchar[]) ${visible}
      order by e.${id} for update of e)`;
  });
  return [
    `with ${locks.join(', ')}
     select entity_type as "entityType", entity_id as "entityId", host_id as "hostId",
       aggregate_version as "aggregateVersion"
     from (${tables.map((_, i) => `select * from t${i}`).join(' union all ')}) u`,
    parameters,
  ];
}

/** Which entities linked to a tag a check accepts: those visible under a host visibility, or those of one host. */
export type LinkedHosts = { readonly visibleTo: HostVisibility } | { readonly ofHost: string };

/**
 * `linkedOutside`'s statement: locks the entities linked to `tagId` that `hosts` accepts (FOR UPDATE, in
 * `detachTagStatements`' order; the host is part of the locking scan, so no other row is waited for) and
 * answers `outside`: whether a link of the tag (in the same snapshot) belongs to an entity not locked here.
 * Counting both is exact: the links of one tag are unique by entity, and each locked entity has one.
 */
export function linkedOutsideStatement(tables: readonly NamedTable[], tagId: string, hosts: LinkedHosts): Statement {
  const parameters: unknown[] = [tagId];
  const accepted =
    'ofHost' in hosts
      ? `and e.host_id = ${bind(parameters, hosts.ofHost)}`
      : visibilityCondition(hosts.visibleTo, 'e.host_id', parameters);
  const locks = tables.map(
    ({ entityType, name, id }, i) =>
      `t${i} as (select e.${id} from ${name} e
         where e.${id} in (select entity_id from entity_tag where tag_id = $1 and entity_type = ${bind(parameters, entityType)})
         ${accepted} order by e.${id} for update of e)`,
  );
  // Every locking CTE is counted whole: a CTE is read only as far as its reader asks.
  const held = tables.map((_, i) => `(select count(*) from t${i})`).join(' + ');
  return [
    `with ${locks.join(', ')}
     select (select count(*) from entity_tag where tag_id = $1) > ${held} as outside`,
    parameters,
  ];
}

/** `applyBatch`'s one statement, or undefined when the batch changes nothing. */
export function applyBatchStatement(tables: readonly NamedTable[], changes: LinkBatch): Statement | undefined {
  const parameters: unknown[] = [];
  const column = <T>(rows: readonly T[], pick: (row: T) => unknown, type: string): string =>
    `${bind(parameters, rows.map(pick))}::${type}[]`;
  const parts: string[] = [];
  const { removed, added, versions } = changes;
  if (removed.length > 0) {
    parts.push(`gone as (delete from entity_tag where (entity_type, entity_id, tag_id) in (select * from unnest(
      ${column(removed, (l) => l.entityType, 'varchar')}, ${column(removed, (l) => l.entityId, 'varchar')},
      ${column(removed, (l) => l.tagId, 'varchar')})))`);
  }
  if (added.length > 0) {
    parts.push(`made as (insert into entity_tag (entity_type, entity_id, entity_host_id, tag_id) select * from unnest(
      ${column(added, (l) => l.entityType, 'varchar')}, ${column(added, (l) => l.entityId, 'varchar')},
      ${column(added, (l) => l.entityHostId, 'varchar')}, ${column(added, (l) => l.tagId, 'varchar')}))`);
  }
  tables.forEach(({ entityType, name, id }, i) => {
    const rows = versions.filter((v) => v.entityType === entityType);
    if (rows.length === 0) return;
    parts.push(`v${i} as (update ${name} e set update_user = v.update_user, update_ts = v.update_ts,
        aggregate_version = v.aggregate_version
      from unnest(${column(rows, (r) => r.entityId, 'varchar')}, ${column(rows, (r) => r.aggregateVersion, 'int')},
        ${column(rows, (r) => r.updateUser, 'varchar')}, ${column(rows, (r) => r.updateTs, 'timestamptz')})
        as v(entity_id, aggregate_version, update_user, update_ts)
      where e.${id} = v.entity_id)`);
  });
  if (parts.length === 0) return undefined;
  // A SELECT at the top, so the driver answers rows; data-modifying CTEs run to completion regardless.
  return [`with ${parts.join(', ')} select 1`, parameters];
}

/**
 * The links (`tag_id`, `entity_type`, `entity_id`) matching `where` whose entity is of one of `tables`
 * and visible under `visibility`, decided on the link itself (`entity_host_id`, kept equal to the entity's host):
 * one scan of ix_entity_tag_tag, which includes the host. `parameters` starts with `first` ($1...).
 */
export function visibleLinks(
  tables: readonly Pick<NamedTable, 'entityType'>[],
  visibility: HostVisibility,
  where: string,
  first: readonly unknown[],
): { sql: string; parameters: unknown[] } {
  const parameters: unknown[] = [...first];
  const types = tables.map((t) => t.entityType);
  // One type as an equality: PostgreSQL 15 applies `= any` on the index's second column as a mere filter.
  const type = types.length === 1 ? `= ${bind(parameters, types[0])}` : `= any(${bind(parameters, types)}::varchar[])`;
  const visible = visibilityCondition(visibility, 'et.entity_host_id', parameters);
  return {
    sql: `select et.tag_id, et.entity_type, et.entity_id from entity_tag et
      where ${where} and et.entity_type ${type} ${visible}`,
    parameters,
  };
}

/**
 * The counted links (`tag_usage`, migration TagUsage) of `tagIds` to entities of `tables` visible under
 * `visibility`, per tag and type: what counting the visible links would answer, in a few counter rows per tag.
 */
export function usageStatement(
  tables: readonly Pick<NamedTable, 'entityType'>[],
  tagIds: readonly string[],
  visibility: HostVisibility,
): Statement {
  const parameters: unknown[] = [tagIds, tables.map((t) => t.entityType)];
  // host_key '' stands for entities of no host (a NULL entity_host_id), visible to every reader.
  const hosts = visibility.allHosts
    ? ''
    : visibility.host === null
      ? `and u.host_key = ''`
      : `and u.host_key in ('', ${bind(parameters, visibility.host)})`;
  return [
    `select u.tag_id, u.entity_type, sum(u.links)::int as n from tag_usage u
      where u.tag_id = any($1::varchar[]) and u.entity_type = any($2::varchar[]) ${hosts}
      group by u.tag_id, u.entity_type having sum(u.links) > 0`,
    parameters,
  ];
}

/** `GET /tags/{tagId}/entities` in (type, id) order: one tag's links are unique by the pair. */
export const ENTITIES_OF_KEYSET = new Keyset([
  { sql: 'l.entity_type', type: 'text' },
  { sql: 'l.entity_id', type: 'text' },
]);

/**
 * The page and count of the visible entities of `tables` carrying the tag `tagId`, straight from
 * ix_entity_tag_tag (tag_id, entity_type, entity_id) in its order; a cursor's page starts after its link
 * (`(type, id) > (...)`, a range of the same index). `rows.limit` is what the page reads.
 */
export function entitiesOfStatements(
  tables: readonly Pick<NamedTable, 'entityType'>[],
  tagId: string,
  visibility: HostVisibility,
  rows: { readonly offset: number; readonly limit: number; readonly after?: readonly KeyValue[] | undefined },
): { page: Statement; count: Statement } {
  const { sql, parameters } = visibleLinks(tables, visibility, 'et.tag_id = $1', [tagId]);
  const usage = usageStatement(tables, [tagId], visibility);
  const paged = [...parameters];
  const keyset = ENTITIES_OF_KEYSET;
  const after = rows.after === undefined ? '' : `where ${keyset.after(rows.after, (v) => bind(paged, v))}`;
  return {
    page: [
      `select l.entity_type as "entityType", l.entity_id as "entityId", ${keyset.select()} from (${sql}) l ${after}
       order by ${keyset.orderBy()} offset ${bind(paged, rows.offset)} limit ${bind(paged, rows.limit)}`,
      paged,
    ],
    // The total from the counters: a tag on a million entities costs what a tag on ten does.
    count: [`select coalesce(sum(n), 0)::int as total from (${usage[0]}) c`, usage[1]],
  };
}
