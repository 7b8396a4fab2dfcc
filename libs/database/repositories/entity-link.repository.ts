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

  /** Adds the links; existing ones are kept (ON CONFLICT DO NOTHING). Answers the tag ids actually added. */
  async link(entityType: string, entityId: string, tagIds: readonly string[]): Promise<string[]> {
    if (tagIds.length === 0) return [];
    const rows = await this.manager.query<{ tag_id: string }[]>(
      `insert into entity_tag (entity_type, entity_id, tag_id) select $1, $2, unnest($3::varchar[])
       on conflict do nothing returning tag_id`,
      [entityType, entityId, tagIds],
    );
    return rows.map((row) => row.tag_id);
  }

  /** Removes the entity's links to tags other than `keep`; answers the tag ids removed. */
  async unlinkOthers(entityType: string, entityId: string, keep: readonly string[]): Promise<string[]> {
    const rows = await this.manager.query<{ tag_id: string }[]>(
      `delete from entity_tag where entity_type = $1 and entity_id = $2 and not (tag_id = any($3::varchar[]))
       returning tag_id`,
      [entityType, entityId, keep],
    );
    return rows.map((row) => row.tag_id);
  }

  /** Removes the entity's links to `tagIds`; answers the tag ids that were linked. */
  async unlink(entityType: string, entityId: string, tagIds: readonly string[]): Promise<string[]> {
    if (tagIds.length === 0) return [];
    const rows = await this.manager.query<{ tag_id: string }[]>(
      `delete from entity_tag where entity_type = $1 and entity_id = $2 and tag_id = any($3::varchar[])
       returning tag_id`,
      [entityType, entityId, tagIds],
    );
    return rows.map((row) => row.tag_id);
  }

  /** How many tags the entity is linked to (the 50-tag cap is checked after a write, in its transaction). */
  async countOf(entityType: string, entityId: string): Promise<number> {
    const rows = await this.manager.query<{ n: number }[]>(
      'select count(*)::int as n from entity_tag where entity_type = $1 and entity_id = $2',
      [entityType, entityId],
    );
    return rows[0]?.n ?? 0;
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
