import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { EntityTag } from '../entities/entity-tag.entity.js';
import { Tag } from '../entities/tag.entity.js';
import { BaseRepository, whereInScope, type HostScope } from '../repository.js';

/**
 * The links between entities of any type and tags (`entity_tag`). `entity_id` is polymorphic and has no
 * foreign key, so the service removes an entity's links with it; a tag's go by ON DELETE CASCADE.
 */
@Injectable()
export class EntityLinkRepository extends BaseRepository {
  constructor(@InjectDataSource() db: DataSource) {
    super(db);
  }

  /** Adds the links; existing ones are kept (ON CONFLICT DO NOTHING). */
  async link(entityType: string, entityId: string, tagIds: readonly string[]): Promise<void> {
    if (tagIds.length === 0) return;
    await this.manager
      .createQueryBuilder()
      .insert()
      .into(EntityTag)
      .values(tagIds.map((tagId) => ({ entityType, entityId, tagId })))
      .orIgnore()
      .execute();
  }

  /** Removes the entity's links to tags other than `keep`. */
  async unlinkOthers(entityType: string, entityId: string, keep: readonly string[]): Promise<void> {
    await this.manager
      .createQueryBuilder()
      .delete()
      .from(EntityTag)
      .where('entity_type = :entityType and entity_id = :entityId and not (tag_id = any(:keep))', {
        entityType,
        entityId,
        keep,
      })
      .execute();
  }

  async unlinkAll(entityType: string, entityId: string): Promise<void> {
    await this.manager.getRepository(EntityTag).delete({ entityType, entityId });
  }

  /** The ids of the tags in `scope` linked to each of `entityIds`, by entity id. */
  async tagIdsOf(entityType: string, entityIds: readonly string[], scope: HostScope): Promise<Map<string, string[]>> {
    const byEntity = new Map<string, string[]>();
    if (entityIds.length === 0) return byEntity;
    const query = this.manager
      .getRepository(EntityTag)
      .createQueryBuilder('et')
      .select('et.entity_id', 'entityId')
      .addSelect('et.tag_id', 'tagId')
      .innerJoin(Tag, 't', 't.tag_id = et.tag_id')
      .where('et.entity_type = :entityType and et.entity_id = any(:ids)', { entityType, ids: entityIds });
    const links = await whereInScope(query, scope, 't.host_id').getRawMany<{ entityId: string; tagId: string }>();
    for (const { entityId, tagId } of links) byEntity.set(entityId, [...(byEntity.get(entityId) ?? []), tagId]);
    return byEntity;
  }

  /** The tags in `scope` linked to one entity, by name as GET /tags sorts. */
  tagsOf(entityType: string, entityId: string, scope: HostScope): Promise<Tag[]> {
    const query = this.manager
      .getRepository(Tag)
      .createQueryBuilder('t')
      .innerJoin(EntityTag, 'et', 'et.tag_id = t.tag_id')
      .where('et.entity_type = :entityType and et.entity_id = :entityId', { entityType, entityId })
      .orderBy('lower(t.tag_name)', 'ASC')
      .addOrderBy('t.tag_id', 'ASC');
    return whereInScope(query, scope, 't.host_id').getMany();
  }
}
