import type { EntityManager, SelectQueryBuilder } from 'typeorm';
import type { Principal } from '#token-binding';
import { whereVisible } from '../common/host-access.js';
import { Tag } from '../tags/tag.entity.js';
import type { TagMatch } from './dto/list-entities.query.js';
import type { EntityTypeDefinition } from './entity-types.js';
import type { TaggableEntity } from './taggable.entity.js';
import { type SortKey } from '#platform';

/** The tag part of a list filter: tag ids already resolved from names. */
export interface TagCondition {
  readonly tagIds: readonly string[];
  readonly match: TagMatch;
}

export interface ListOptions {
  readonly offset: number;
  readonly limit: number;
  readonly sort: readonly SortKey<string>[];
  readonly hostId?: string;
  readonly tags?: TagCondition;
}

/** The column behind a property of the definition's entity, from TypeORM's metadata. */
export function columnOf(manager: EntityManager, def: EntityTypeDefinition, property: string): string {
  const column = manager.connection.getMetadata(def.entity).findColumnWithPropertyName(property);
  if (column === undefined) throw new Error(`${def.entityType} has no column for ${property}`);
  return column.databaseName;
}

/**
 * Ids of the visible tags named `names`, case-insensitively. `lower(tag_name) in (lower($1), ...)` is
 * the expression of the unique index `uq_tag_name_lower`, so each name is one index probe.
 */
export function tagsNamedQuery(
  manager: EntityManager,
  principal: Principal,
  names: readonly string[],
): SelectQueryBuilder<Tag> {
  const parameters = Object.fromEntries(names.map((name, i) => [`tagName${i}`, name]));
  const list = names.map((_, i) => `lower(:tagName${i})`).join(', ');
  const query = manager
    .getRepository(Tag)
    .createQueryBuilder('t')
    .select('t.tag_id', 'tagId')
    .where(`lower(t.tag_name) in (${list})`, parameters);
  return whereVisible(query, principal, 't.host_id');
}

/**
 * The page and count queries of a list (the service runs exactly these). The tag filter is a
 * semi-join on `entity_tag` driven by `ix_entity_tag_tag (tag_id, entity_type, entity_id)`: `any` is
 * an EXISTS, `all` keeps the entities linked to as many of the tags as were asked for (the primary
 * key makes each link unique, so the count cannot double up).
 */
export function entityListQueries(
  manager: EntityManager,
  def: EntityTypeDefinition,
  principal: Principal,
  options: ListOptions,
): { page: SelectQueryBuilder<TaggableEntity>; count: SelectQueryBuilder<TaggableEntity> } {
  const id = `e.${columnOf(manager, def, def.idField)}`;
  const base = whereVisible(manager.getRepository(def.entity).createQueryBuilder('e'), principal, 'e.host_id');
  if (options.hostId !== undefined) base.andWhere('e.host_id = :hostId', { hostId: options.hostId });
  const tags = options.tags;
  if (tags !== undefined) {
    const links = 'from entity_tag et where et.entity_type = :entityType and et.tag_id = any(:tagIds)';
    const parameters = { entityType: def.entityType, tagIds: tags.tagIds, tagCount: tags.tagIds.length };
    base.andWhere(
      tags.match === 'any'
        ? `exists (select 1 ${links} and et.entity_id = ${id})`
        : `${id} in (select et.entity_id ${links} group by et.entity_id having count(*) = :tagCount)`,
      parameters,
    );
  }
  const count = base.clone().select('count(*)', 'total');
  const page = base.clone().offset(options.offset).limit(options.limit);
  for (const { key, descending } of options.sort) {
    const column = `e.${columnOf(manager, def, key)}`;
    // Names and other text sort case-insensitively, as tags do; ids and times sort as stored.
    const text = key !== def.idField && key !== 'updateTs';
    page.addOrderBy(text ? `lower(${column})` : column, descending ? 'DESC' : 'ASC');
  }
  // The id breaks ties so paging is stable even when sort keys repeat.
  if (!options.sort.some((s) => s.key === def.idField)) page.addOrderBy(id, 'ASC');
  return { page, count };
}
