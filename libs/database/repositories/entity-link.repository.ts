import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type SelectQueryBuilder } from 'typeorm';
import type { EntityTable } from '../entities/entity-tables.js';
import { EntityTag } from '../entities/entity-tag.entity.js';
import { Tag } from '../entities/tag.entity.js';
import { BaseRepository, whereVisible, type HostVisibility } from '../repository.js';
import type { KeysetPage, KeyValue, PageWindow } from '../keyset.js';
import {
  applyBatchStatement,
  detachTagStatements,
  ENTITIES_OF_KEYSET,
  entitiesOfStatements,
  LINK_TAGS,
  linkedOutsideStatement,
  LINKS_OF_MANY,
  lockEntitiesStatement,
  usageStatement,
  type LinkBatch,
  type LinkedHosts,
  type LockedEntity,
  type NamedTable,
  type Statement,
} from './entity-link.sql.js';

export type { LinkBatch, LinkedHosts, LockedEntity } from './entity-link.sql.js';

/**
 * The links between entities of any type and tags (`entity_tag`). `entity_id` is polymorphic and has no
 * foreign key, so the service removes an entity's links with it; a tag's go by ON DELETE CASCADE.
 */
@Injectable()
export class EntityLinkRepository extends BaseRepository {
  constructor(@InjectDataSource() db: DataSource) {
    super(db);
  }

  /**
   * Adds the links; existing ones are kept (ON CONFLICT DO NOTHING). Answers the tag ids actually added and,
   * from the same statement, how many links the entity has now (the caller holds the entity's row lock, so
   * no other write changes the count meanwhile).
   */
  async link(
    entityType: string,
    entityId: string,
    hostId: string | null,
    tagIds: readonly string[],
  ): Promise<{ added: string[]; total: number }> {
    const rows = await this.manager.query<{ added: string[]; before: number }[]>(LINK_TAGS, [
      entityType,
      entityId,
      hostId,
      tagIds,
    ]);
    const added = rows[0]?.added ?? [];
    return { added, total: (rows[0]?.before ?? 0) + added.length };
  }

  /** The entity's links, each with its tag's host, by tag id (every host's: the service decides who sees what). */
  linkedTags(entityType: string, entityId: string): Promise<{ tagId: string; hostId: string | null }[]> {
    return this.manager.query<{ tagId: string; hostId: string | null }[]>(
      `select et.tag_id as "tagId", t.host_id as "hostId" from entity_tag et join tag t on t.tag_id = et.tag_id
       where et.entity_type = $1 and et.entity_id = $2 order by et.tag_id`,
      [entityType, entityId],
    );
  }

  /**
   * Removes every link of the tag `tagId` to entities of `tables` and records the change on each of those
   * entities (next version, `audit`'s user and time); answers them with their hosts, by type then id. The
   * caller holds the tag's row FOR UPDATE, so no link to it can be added meanwhile. Two statements whatever
   * the number of links: the first locks the entities, as every entity writer does before touching their
   * links (so a writer is never waiting on a link this removes while holding the entity it wants); the
   * second removes the links and bumps exactly the entities they belonged to.
   */
  async detachTag(
    tables: readonly EntityTable[],
    tagId: string,
    audit: { readonly updateUser: string | null; readonly updateTs: Date },
  ): Promise<{ entityType: string; entityId: string; hostId: string | null }[]> {
    if (tables.length === 0) return [];
    const named = tables.map((table) => this.named(table));
    const { lock, remove } = detachTagStatements(named, tagId, audit);
    await this.manager.query(...lock);
    return this.manager.query<{ entityType: string; entityId: string; hostId: string | null }[]>(...remove);
  }

  /**
   * Whether the tag is linked to an entity of `tables` that `hosts` does not accept, the others locked (FOR UPDATE,
   * as `detachTag` locks) so they keep host and link; the caller holds the tag FOR UPDATE, so none is added.
   */
  async linkedOutside(tables: readonly EntityTable[], tagId: string, hosts: LinkedHosts): Promise<boolean> {
    const named = tables.map((table) => this.named(table));
    const rows = await this.manager.query<{ outside: boolean }[]>(...linkedOutsideStatement(named, tagId, hosts));
    return rows[0]?.outside ?? false;
  }

  /**
   * Locks (FOR UPDATE) the existing entities among `ids` of each of `tables` visible under `visibility` and
   * answers them with their host and version: one statement for a whole batch. Types in the order of `tables`
   * (pass them in declaration order), ids in order within each, as `detachTag` takes them, so lockers of
   * several entities never wait for each other in a circle. The caller has locked the tags it links first.
   */
  async lockEntities(
    tables: readonly { readonly table: EntityTable; readonly ids: readonly string[] }[],
    visibility: HostVisibility,
  ): Promise<LockedEntity[]> {
    const present = tables.filter(({ ids }) => ids.length > 0);
    if (present.length === 0) return [];
    const named = present.map(({ table, ids }) => ({ ...this.named(table), ids }));
    return this.manager.query<LockedEntity[]>(...lockEntitiesStatement(named, visibility));
  }

  /**
   * Every link of the given entities (`entityTypes[i]`, `entityIds[i]`), whatever the tag's host, as tag ids
   * by entity. Read in a statement after the one that locked them, so it sees links committed meanwhile.
   */
  async linksOfMany(
    entityTypes: readonly string[],
    entityIds: readonly string[],
  ): Promise<{ entityType: string; entityId: string; tagIds: string[] }[]> {
    if (entityIds.length === 0) return [];
    return this.manager.query<{ entityType: string; entityId: string; tagIds: string[] }[]>(LINKS_OF_MANY, [
      entityTypes,
      entityIds,
    ]);
  }

  /**
   * Writes a batch's link changes in one statement: removes `removed`, inserts `added` (with each entity's
   * host), and gives each entity of `versions` its next version and audit fields. The caller holds every
   * entity concerned (`lockEntities`) and the tags added, and has worked out the net changes, so no link
   * is both removed and added and none added exists already.
   */
  async applyBatch(tables: readonly EntityTable[], changes: LinkBatch): Promise<void> {
    const named = tables.map((table) => this.named(table));
    const statement = applyBatchStatement(named, changes);
    if (statement !== undefined) await this.manager.query(...statement);
  }

  /** The table's name and id column, from TypeORM's metadata. */
  private named(table: EntityTable): NamedTable {
    const metadata = this.manager.connection.getMetadata(table.entity);
    const id = metadata.findColumnWithPropertyName(table.idField)?.databaseName;
    if (id === undefined) throw new Error(`${table.entityType} has no column for ${table.idField}`);
    return { name: metadata.tableName, id, entityType: table.entityType };
  }

  /** The entity moved to another host: its links follow, so link reads see it where it now is. */
  async rehost(entityType: string, entityId: string, hostId: string | null): Promise<void> {
    await this.manager.query(
      `update entity_tag set entity_host_id = $3
       where entity_type = $1 and entity_id = $2 and entity_host_id is distinct from $3`,
      [entityType, entityId, hostId],
    );
  }

  /** Removes the entity's links to tags other than `keep`; answers the tag ids removed. */
  unlinkOthers(entityType: string, entityId: string, keep: readonly string[]): Promise<string[]> {
    return this.deleteLinks(entityType, entityId, 'not (tag_id = any($3::varchar[]))', keep);
  }

  /** Removes the entity's links to `tagIds`; answers the tag ids that were linked. */
  async unlink(entityType: string, entityId: string, tagIds: readonly string[]): Promise<string[]> {
    if (tagIds.length === 0) return [];
    return this.deleteLinks(entityType, entityId, 'tag_id = any($3::varchar[])', tagIds);
  }

  /** Deletes the entity's links whose tag meets `tagCondition` (on $3 = `tagIds`); answers their tag ids. */
  private async deleteLinks(
    entityType: string,
    entityId: string,
    tagCondition: string,
    tagIds: readonly string[],
  ): Promise<string[]> {
    const rows = await this.manager.query<{ tag_id: string }[]>(
      // A SELECT at the top: for a bare DELETE the driver answers [rows, count], not rows.
      `with gone as (
         delete from entity_tag where entity_type = $1 and entity_id = $2 and ${tagCondition} returning tag_id
       ) select tag_id from gone`,
      [entityType, entityId, tagIds],
    );
    return rows.map((row) => row.tag_id);
  }

  async unlinkAll(entityType: string, entityId: string): Promise<void> {
    await this.manager.getRepository(EntityTag).delete({ entityType, entityId });
  }

  /** The ids of the tags visible under `visibility` linked to each of `entityIds`, by entity id. */
  async tagIdsOf(
    entityType: string,
    entityIds: readonly string[],
    visibility: HostVisibility,
  ): Promise<Map<string, string[]>> {
    const byEntity = new Map<string, string[]>();
    if (entityIds.length === 0) return byEntity;
    const links = await this.tagIdsQuery(entityType, entityIds, visibility).getRawMany<{
      entityId: string;
      tagId: string;
    }>();
    for (const { entityId, tagId } of links) byEntity.set(entityId, [...(byEntity.get(entityId) ?? []), tagId]);
    return byEntity;
  }

  /** The statement `tagIdsOf` runs (rows `entityId`, `tagId`); exposed so the filter bench sends exactly it. */
  tagIdsQuery(
    entityType: string,
    entityIds: readonly string[],
    visibility: HostVisibility,
  ): SelectQueryBuilder<EntityTag> {
    const query = this.manager
      .getRepository(EntityTag)
      .createQueryBuilder('et')
      .select('et.entity_id', 'entityId')
      .addSelect('et.tag_id', 'tagId')
      .innerJoin(Tag, 't', 't.tag_id = et.tag_id')
      .where('et.entity_type = :entityType and et.entity_id = any(:ids)', { entityType, ids: entityIds });
    return whereVisible(query, visibility, 't.host_id');
  }

  /** The tags visible under `visibility` linked to one entity, by name as GET /tags sorts. */
  tagsOf(entityType: string, entityId: string, visibility: HostVisibility): Promise<Tag[]> {
    const query = this.manager
      .getRepository(Tag)
      .createQueryBuilder('t')
      .innerJoin(EntityTag, 'et', 'et.tag_id = t.tag_id')
      .where('et.entity_type = :entityType and et.entity_id = :entityId', { entityType, entityId })
      .orderBy('lower(t.tag_name)', 'ASC')
      .addOrderBy('t.tag_id', 'ASC');
    return whereVisible(query, visibility, 't.host_id').getMany();
  }

  /**
   * How many entities of each type in `tables`, visible under `visibility`, each of `tagIds` is linked to: one
   * statement for a whole page of tags, summing the counters of `tag_usage` (migration TagUsage).
   */
  async usage(
    tables: readonly EntityTable[],
    tagIds: readonly string[],
    visibility: HostVisibility,
  ): Promise<Map<string, Map<string, number>>> {
    const byTag = new Map<string, Map<string, number>>();
    if (tagIds.length === 0) return byTag;
    const rows = await this.manager.query<{ tag_id: string; entity_type: string; n: number }[]>(
      ...usageStatement(tables, tagIds, visibility),
    );
    for (const row of rows) {
      const counts = byTag.get(row.tag_id) ?? new Map<string, number>();
      counts.set(row.entity_type, row.n);
      byTag.set(row.tag_id, counts);
    }
    return byTag;
  }

  /** The order of `GET /tags/{tagId}/entities`: by type, then id (together unique for one tag). */
  readonly entitiesKeyset = ENTITIES_OF_KEYSET;

  /**
   * The page and count statements of `GET /tags/{tagId}/entities` (see `entitiesOfStatements`), exposed so a
   * test can EXPLAIN exactly what runs. The page reads `limit + 1` rows: the extra one says a match follows.
   */
  entitiesOfQueries(
    tables: readonly EntityTable[],
    tagId: string,
    visibility: HostVisibility,
    entityType: string | undefined,
    offset: number,
    limit: number,
    after?: readonly KeyValue[],
  ): { page: Statement; count: Statement } {
    const types = entityType === undefined ? tables : tables.filter((t) => t.entityType === entityType);
    return entitiesOfStatements(types, tagId, visibility, { offset, limit: limit + 1, after });
  }

  /** The page of `window`, and the count when it asks for one (both at once). */
  async entitiesOf(
    tables: readonly EntityTable[],
    tagId: string,
    visibility: HostVisibility,
    entityType: string | undefined,
    window: PageWindow,
  ): Promise<KeysetPage<{ entityType: string; entityId: string }>> {
    const { offset, limit, after } = window;
    const { page, count } = this.entitiesOfQueries(tables, tagId, visibility, entityType, offset, limit, after);
    const [rows, counted] = await Promise.all([
      this.manager.query<{ entityType: string; entityId: string }[]>(...page),
      window.withTotal ? this.manager.query<{ total: number }[]>(...count) : undefined,
    ]);
    const { rows: entities, next } = ENTITIES_OF_KEYSET.pageOf(rows, limit);
    return {
      rows: entities.map(({ entityType: type, entityId }) => ({ entityType: type, entityId })),
      ...(counted === undefined ? {} : { total: counted[0]?.total ?? 0 }),
      next,
    };
  }
}
