import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { uniqueViolation } from '#database';
import { badRequest, conflict, notFound, preconditionFailed, newId, parseSort } from '#platform';
import type { Principal } from '#token-binding';
import { versionMatches, type VersionCondition } from '../common/etag.js';
import { assertCanWrite, canSee, whereVisible } from '../common/host-access.js';
import { Tag } from '../tags/tag.entity.js';
import { toTagView, type TagView } from '../tags/tag.view.js';
import type { EntityInput } from './dto/entity-body.dto.js';
import type { ListEntitiesQuery } from './dto/list-entities.query.js';
import { columnOf, entityListQueries, tagsNamedQuery, type TagCondition } from './entity-queries.js';
import { EntityTag } from './entity-tag.entity.js';
import type { EntityTypeDefinition } from './entity-types.js';
import { sortedIds, textOf, toEntityView, type EntityPage, type EntityView } from './entity.view.js';
import type { TaggableEntity } from './taggable.entity.js';

/**
 * Create, read, update, delete, tag and list entities of any type in ENTITY_TYPES. The definition
 * says which table and fields; every rule (DESIGN 4.3, 5.2) lives here once.
 */
@Injectable()
export class EntitiesService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async create(def: EntityTypeDefinition, principal: Principal, input: EntityInput): Promise<EntityView> {
    const hostId = input.hostId ?? null;
    assertCanWrite(principal, hostId, def.entityType);
    const id = textOf(input, def.idField) ?? newId();
    return this.db.transaction(async (tx) => {
      const tagIds = await this.visibleTagIds(tx, principal, input.tagIds ?? []);
      const row = Object.assign(tx.getRepository(def.entity).create(), {
        ...ownFields(def, input),
        [def.idField]: id,
        hostId,
        ...written(principal, 1),
      });
      try {
        await tx.getRepository(def.entity).insert(row);
      } catch (error) {
        if (uniqueViolation(error) === primaryKeyOf(tx, def)) {
          throw conflict(`A ${def.entityType} with ${def.idField} ${id} already exists`);
        }
        throw error;
      }
      await this.link(tx, def, id, tagIds);
      return toEntityView(def, row, tagIds);
    });
  }

  async list(def: EntityTypeDefinition, principal: Principal, query: ListEntitiesQuery): Promise<EntityPage> {
    const sort = parseSort(query.sort, [...def.sortFields, def.idField, 'updateTs'], def.sortFields[0]);
    const names = query.tagNames ?? [];
    let tags: TagCondition | undefined;
    if (names.length > 0) {
      const found = await tagsNamedQuery(this.db.manager, principal, names).getRawMany<{ tagId: string }>();
      // A name that names no visible tag matches nothing: with `all` no entity can carry every name.
      if (found.length === 0 || (query.tagMatch === 'all' && found.length < names.length)) {
        return { total: 0, [def.path]: [] };
      }
      tags = { tagIds: found.map((t) => t.tagId), match: query.tagMatch };
    }
    const { page, count } = entityListQueries(this.db.manager, def, principal, {
      offset: query.offset,
      limit: query.limit,
      sort,
      hostId: query.hostId,
      tags,
    });
    const [rows, counted] = await Promise.all([page.getMany(), count.getRawOne<{ total: string }>()]);
    const links = await this.tagIdsOf(this.db.manager, def, principal, rows);
    return {
      total: Number(counted?.total ?? 0),
      [def.path]: rows.map((row) => toEntityView(def, row, links.get(idOf(def, row)) ?? [])),
    };
  }

  async get(def: EntityTypeDefinition, principal: Principal, id: string): Promise<EntityView> {
    return this.view(this.db.manager, def, principal, await this.findVisible(this.db.manager, def, principal, id));
  }

  /** PUT: replaces the fields; with `tagIds` also the links, in the same transaction. */
  async update(
    def: EntityTypeDefinition,
    principal: Principal,
    id: string,
    input: EntityInput,
    condition: VersionCondition,
  ): Promise<EntityView> {
    const bodyId = textOf(input, def.idField);
    if (bodyId !== null && bodyId !== id) {
      throw badRequest(`${def.idField} in the body must equal the ${def.idField} in the path`, [
        { field: def.idField, message: 'must equal the path' },
      ]);
    }
    const hostId = input.hostId ?? null;
    return this.db.transaction(async (tx) => {
      const current = await this.lockWritable(tx, def, principal, id, condition);
      assertCanWrite(principal, hostId, def.entityType);
      if (input.tagIds !== undefined) await this.replaceLinks(tx, def, principal, id, input.tagIds);
      return this.save(tx, def, principal, current, { ...ownFields(def, input), hostId });
    });
  }

  /** Removes the entity and, in the same transaction, its links (entity_tag has no foreign key to it). */
  async delete(
    def: EntityTypeDefinition,
    principal: Principal,
    id: string,
    condition: VersionCondition,
  ): Promise<void> {
    await this.db.transaction(async (tx) => {
      await this.lockWritable(tx, def, principal, id, condition);
      await tx.getRepository(EntityTag).delete({ entityType: def.entityType, entityId: id });
      await tx.getRepository(def.entity).delete(id);
    });
  }

  /** GET /{type}/{id}/tags: the visible tags of a visible entity, sorted by name as GET /tags sorts. */
  async tags(def: EntityTypeDefinition, principal: Principal, id: string): Promise<TagView[]> {
    await this.findVisible(this.db.manager, def, principal, id);
    const query = this.db
      .getRepository(Tag)
      .createQueryBuilder('t')
      .innerJoin(EntityTag, 'et', 'et.tag_id = t.tag_id')
      .where('et.entity_type = :entityType and et.entity_id = :id', { entityType: def.entityType, id })
      .orderBy('lower(t.tag_name)', 'ASC')
      .addOrderBy('t.tag_id', 'ASC');
    const tags = await whereVisible(query, principal, 't.host_id').getMany();
    return tags.map(toTagView);
  }

  /** PUT /{type}/{id}/tags: replaces the links; a change of the entity, so its version moves on. */
  async setTags(
    def: EntityTypeDefinition,
    principal: Principal,
    id: string,
    tagIds: readonly string[],
    condition: VersionCondition,
  ): Promise<EntityView> {
    return this.db.transaction(async (tx) => {
      const current = await this.lockWritable(tx, def, principal, id, condition);
      await this.replaceLinks(tx, def, principal, id, tagIds);
      return this.save(tx, def, principal, current, {});
    });
  }

  /** Writes `changes` plus the audit fields and the next version, and answers the new representation. */
  private async save(
    tx: EntityManager,
    def: EntityTypeDefinition,
    principal: Principal,
    current: TaggableEntity,
    changes: Record<string, unknown>,
  ): Promise<EntityView> {
    const next = Object.assign(current, changes, written(principal, current.aggregateVersion + 1));
    await tx.getRepository(def.entity).update(idOf(def, next), next);
    return this.view(tx, def, principal, next);
  }

  private async view(
    manager: EntityManager,
    def: EntityTypeDefinition,
    principal: Principal,
    row: TaggableEntity,
  ): Promise<EntityView> {
    const links = await this.tagIdsOf(manager, def, principal, [row]);
    return toEntityView(def, row, links.get(idOf(def, row)) ?? []);
  }

  /**
   * The ids of the visible tags linked to `rows`, by entity id. Tags the caller cannot see are left
   * out, as everywhere else (DESIGN 4.3).
   */
  private async tagIdsOf(
    manager: EntityManager,
    def: EntityTypeDefinition,
    principal: Principal,
    rows: readonly TaggableEntity[],
  ): Promise<Map<string, string[]>> {
    const byEntity = new Map<string, string[]>();
    if (rows.length === 0) return byEntity;
    const query = manager
      .getRepository(EntityTag)
      .createQueryBuilder('et')
      .select('et.entity_id', 'entityId')
      .addSelect('et.tag_id', 'tagId')
      .innerJoin(Tag, 't', 't.tag_id = et.tag_id')
      .where('et.entity_type = :entityType and et.entity_id = any(:ids)', {
        entityType: def.entityType,
        ids: rows.map((row) => idOf(def, row)),
      });
    const links = await whereVisible(query, principal, 't.host_id').getRawMany<{ entityId: string; tagId: string }>();
    for (const { entityId, tagId } of links) byEntity.set(entityId, [...(byEntity.get(entityId) ?? []), tagId]);
    return byEntity;
  }

  /**
   * Checks that every id names a tag the caller can see (400 listing the others) and keeps those tags
   * from being deleted until the transaction ends (FOR KEY SHARE), so the links can always be written.
   */
  private async visibleTagIds(
    tx: EntityManager,
    principal: Principal,
    requested: readonly string[],
  ): Promise<string[]> {
    const ids = sortedIds(requested);
    if (ids.length === 0) return ids;
    const query = tx
      .getRepository(Tag)
      .createQueryBuilder('t')
      .select('t.tag_id', 'tagId')
      .where('t.tag_id = any(:ids)', { ids })
      .setLock('for_key_share');
    const found = new Set(
      (await whereVisible(query, principal, 't.host_id').getRawMany<{ tagId: string }>()).map((t) => t.tagId),
    );
    const unknown = ids.filter((tagId) => !found.has(tagId));
    if (unknown.length > 0) {
      throw badRequest(
        `Unknown tag ids: ${unknown.join(', ')}`,
        unknown.map((tagId) => ({ field: 'tagIds', message: `no tag with tagId ${tagId}` })),
      );
    }
    return ids;
  }

  private async link(
    tx: EntityManager,
    def: EntityTypeDefinition,
    id: string,
    tagIds: readonly string[],
  ): Promise<void> {
    if (tagIds.length === 0) return;
    await tx
      .createQueryBuilder()
      .insert()
      .into(EntityTag)
      .values(tagIds.map((tagId) => ({ entityType: def.entityType, entityId: id, tagId })))
      .orIgnore()
      .execute();
  }

  /** Makes the entity's links exactly `requested`: links to other tags go, missing ones are added. */
  private async replaceLinks(
    tx: EntityManager,
    def: EntityTypeDefinition,
    principal: Principal,
    id: string,
    requested: readonly string[],
  ): Promise<void> {
    const tagIds = await this.visibleTagIds(tx, principal, requested);
    await tx
      .createQueryBuilder()
      .delete()
      .from(EntityTag)
      .where('entity_type = :entityType and entity_id = :id and not (tag_id = any(:tagIds))', {
        entityType: def.entityType,
        id,
        tagIds,
      })
      .execute();
    await this.link(tx, def, id, tagIds);
  }

  private async findVisible(
    manager: EntityManager,
    def: EntityTypeDefinition,
    principal: Principal,
    id: string,
    lock = false,
  ): Promise<TaggableEntity> {
    const query = manager
      .getRepository(def.entity)
      .createQueryBuilder('e')
      .where(`e.${columnOf(manager, def, def.idField)} = :id`, { id });
    if (lock) query.setLock('pessimistic_write');
    const row = await query.getOne();
    // Another host's entity is answered exactly like a missing one (DESIGN 4.3).
    if (row === null || !canSee(principal, row.hostId))
      throw notFound(`No ${def.entityType} with ${def.idField} ${id}`);
    return row;
  }

  /** Locks the row for this transaction after checking visibility, write access and `If-Match`. */
  private async lockWritable(
    tx: EntityManager,
    def: EntityTypeDefinition,
    principal: Principal,
    id: string,
    condition: VersionCondition,
  ): Promise<TaggableEntity> {
    const row = await this.findVisible(tx, def, principal, id, true);
    assertCanWrite(principal, row.hostId, def.entityType);
    if (!versionMatches(condition, row.aggregateVersion)) {
      throw preconditionFailed(
        `${def.entityType} ${id} is at version ${row.aggregateVersion}, not the one in If-Match`,
      );
    }
    return row;
  }
}

/** The type's own fields from a body; an omitted optional field is stored as null (PUT replaces). */
function ownFields(def: EntityTypeDefinition, input: EntityInput): Record<string, string | null> {
  return Object.fromEntries(def.fields.map((field) => [field, textOf(input, field)]));
}

/** Who wrote, when, and the version that write makes. */
function written(
  principal: Principal,
  aggregateVersion: number,
): Pick<TaggableEntity, 'updateUser' | 'updateTs' | 'aggregateVersion'> {
  return { updateUser: principal.subject, updateTs: new Date(), aggregateVersion };
}

function idOf(def: EntityTypeDefinition, row: TaggableEntity): string {
  return textOf(row, def.idField) ?? '';
}

function primaryKeyOf(tx: EntityManager, def: EntityTypeDefinition): string | undefined {
  return tx.connection.getMetadata(def.entity).primaryColumns[0]?.primaryKeyConstraintName;
}
