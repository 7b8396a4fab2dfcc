import { Injectable } from '@nestjs/common';
import {
  ChangeEventRepository,
  DuplicateKeyError,
  EntityLinkRepository,
  Tag,
  TAG_SORT_KEYS,
  TAGGABLE_TABLES,
  TagRepository,
  UnitOfWork,
  type Tx,
} from '#database';
import { badRequest, conflict, forbidden, newId, likePattern, parseSort, pageBody, pageWindow } from '#platform';
import type { Principal } from '#token-binding';
import { visibleRow, writableRow, type ResourceName } from '../common/access-checks.js';
import type { VersionCondition } from '../common/etag.js';
import { assertCanWrite, visibilityOf } from '../common/host-access.js';
import { changeEvent, linkEvent } from '../events/change-events.js';
import type { TagEntitiesQuery } from './dto/tag-entities.query.js';
import type { ListTagsQuery } from './dto/list-tags.query.js';
import type { TagBodyDto } from './dto/tag-body.dto.js';
import { toTagView, type TaggedEntityPage, type TagPage, type TagView } from './tag.view.js';

const TAG: ResourceName = { kind: 'tag', idField: 'tagId' };

/** Maps a unique violation to 409; the database's unique indexes are the only duplicate check. */
function duplicateTag(error: unknown, body: { tagId: string; tagName: string }): unknown {
  if (!(error instanceof DuplicateKeyError)) return error;
  if (error.constraint === 'pk_tag') return conflict(`A tag with tagId ${body.tagId} already exists`);
  if (error.constraint === 'uq_tag_name_lower') return conflict(`A tag named "${body.tagName}" already exists`);
  return error;
}

/** The rules of tags (DESIGN 4): host visibility and write access, versions, 409 on duplicates. */
@Injectable()
export class TagsService {
  constructor(
    private readonly tags: TagRepository,
    private readonly work: UnitOfWork,
    private readonly events: ChangeEventRepository,
    private readonly links: EntityLinkRepository,
  ) {}

  async create(principal: Principal, body: TagBodyDto): Promise<TagView> {
    const hostId = body.hostId ?? null;
    assertCanWrite(principal, hostId, 'tag');
    const tag = Object.assign(new Tag(), {
      tagId: body.tagId ?? newId(),
      hostId,
      tagName: body.tagName,
      tagDesc: body.tagDesc ?? null,
      updateUser: principal.subject,
      updateTs: new Date(),
      aggregateVersion: 1,
    });
    const view = toTagView(tag);
    // One statement (the insert and its change event): its own transaction, no BEGIN/COMMIT round trips.
    try {
      await this.events.recorded(this.tags.insertStatement(tag), [changeEvent('tag.created', principal, hostId, view)]);
    } catch (error) {
      throw duplicateTag(error, tag);
    }
    return view;
  }

  /** GET /tags: filtered and sorted, from an offset or after a cursor's tag (DESIGN 4.2). */
  async list(principal: Principal, query: ListTagsQuery): Promise<TagPage> {
    const sort = parseSort(query.sort, [...TAG_SORT_KEYS], 'tagName');
    const pattern = (value: string | undefined): string | undefined =>
      value === undefined ? undefined : likePattern(value);
    const filter = {
      visibility: visibilityOf(principal),
      tagName: pattern(query.tagName),
      tagDesc: pattern(query.tagDesc),
      q: pattern(query.q),
      hostId: query.hostId,
    };
    const keyset = this.tags.keyset(sort);
    const scope = { list: 'tags', filter: { ...filter, sort } };
    const window = pageWindow(query, scope, keyset.accepts);
    const page = await this.tags.page(filter, keyset, window);
    const views = page.rows.map(toTagView);
    const tags = query.include === 'usage' ? await this.withUsage(principal, views) : views;
    return pageBody(window, scope, page, 'tags', tags);
  }

  async get(principal: Principal, tagId: string, include?: 'usage'): Promise<TagView> {
    const view = toTagView(visibleRow(principal, TAG, tagId, await this.tags.findById(tagId)));
    return include === 'usage' ? ((await this.withUsage(principal, [view]))[0] ?? view) : view;
  }

  /** GET /tags/{tagId}/entities: the visible entities carrying a visible tag, by type then id. */
  async entities(principal: Principal, tagId: string, query: TagEntitiesQuery): Promise<TaggedEntityPage> {
    const visibility = visibilityOf(principal);
    const scope = { list: 'tag-entities', filter: { tagId, visibility, entityType: query.entityType } };
    // A refused cursor is bad input, answered before whether the tag exists (DESIGN 3's order).
    const window = pageWindow(query, scope, this.links.entitiesKeyset.accepts);
    visibleRow(principal, TAG, tagId, await this.tags.findById(tagId));
    const page = await this.links.entitiesOf(TAGGABLE_TABLES, tagId, visibility, query.entityType, window);
    return pageBody(window, scope, page, 'entities', page.rows);
  }

  /** Adds per-type counts of the entities the caller can see: one statement for the whole page. */
  private async withUsage(principal: Principal, views: readonly TagView[]): Promise<TagView[]> {
    const counts = await this.links.usage(
      TAGGABLE_TABLES,
      views.map((view) => view.tagId),
      visibilityOf(principal),
    );
    return views.map((view) => ({
      ...view,
      usage: Object.fromEntries(
        TAGGABLE_TABLES.map(({ entityType }) => [entityType, counts.get(view.tagId)?.get(entityType) ?? 0]),
      ),
    }));
  }

  async update(principal: Principal, tagId: string, body: TagBodyDto, condition: VersionCondition): Promise<TagView> {
    if (body.tagId !== undefined && body.tagId !== tagId) {
      throw badRequest('tagId in the body must equal the tagId in the path', [
        { field: 'tagId', message: 'must equal the path' },
      ]);
    }
    const hostId = body.hostId ?? null;
    return this.work.run(async (tx) => {
      const current = await this.lockWritable(tx, principal, tagId, condition);
      assertCanWrite(principal, hostId, 'tag');
      // A host's tag is seen by its host's entities only (DESIGN 12), whoever moves it; global is seen by all.
      if (hostId !== null && hostId !== current.hostId) {
        if (await this.links.in(tx).linkedOutside(TAGGABLE_TABLES, tagId, { ofHost: hostId })) {
          throw conflict(`Tag ${tagId} is linked to entities that host ${hostId} cannot see; unlink them first`);
        }
      }
      const next = Object.assign(current, {
        hostId,
        tagName: body.tagName,
        tagDesc: body.tagDesc ?? null,
        updateUser: principal.subject,
        updateTs: new Date(),
        aggregateVersion: current.aggregateVersion + 1,
      });
      try {
        await this.tags.in(tx).update(next);
      } catch (error) {
        throw duplicateTag(error, next);
      }
      const view = toTagView(next);
      await this.events.in(tx).append([changeEvent('tag.updated', principal, hostId, view)]);
      return view;
    });
  }

  /**
   * Removes the tag and its links. Each link removed is a change of its entity (DESIGN 12): the entity
   * moves to its next version (the deleter as `updateUser`) and gets an `entity.untagged` event, all in
   * this transaction and in a fixed number of statements, however many entities carried the tag. Only a
   * global admin changes entities of hosts other than its own so (DESIGN 16): for anyone else a tag linked
   * to one is 403, decided with the tag and the caller's linked entities locked, before any write.
   */
  async delete(principal: Principal, tagId: string, condition: VersionCondition): Promise<void> {
    await this.work.run(async (tx) => {
      const tag = await this.lockWritable(tx, principal, tagId, condition);
      const visibility = visibilityOf(principal);
      if (
        !visibility.allHosts &&
        (await this.links.in(tx).linkedOutside(TAGGABLE_TABLES, tagId, { visibleTo: visibility }))
      ) {
        throw forbidden(
          `Deleting tag ${tagId} would untag entities of other hosts: that needs tags:admin without a host claim`,
        );
      }
      const audit = { updateUser: principal.subject, updateTs: new Date() };
      const untagged = await this.links.in(tx).detachTag(TAGGABLE_TABLES, tagId, audit);
      const data = { tagId, tagName: tag.tagName, hostId: tag.hostId };
      // Appended while the tag still exists, so the untagged events record its host for the feed's readers.
      await this.events
        .in(tx)
        .append([
          ...untagged.map((e) => linkEvent('entity.untagged', principal, e.entityType, e.entityId, e.hostId, [tagId])),
          changeEvent('tag.deleted', principal, tag.hostId, data),
        ]);
      await this.tags.in(tx).delete(tagId);
    });
  }

  /** The tag, held (FOR UPDATE) until the transaction ends, once the caller may write it at the If-Match version. */
  private async lockWritable(tx: Tx, principal: Principal, tagId: string, condition: VersionCondition): Promise<Tag> {
    return writableRow(
      principal,
      TAG,
      tagId,
      await this.tags.in(tx).lockVisible(tagId, visibilityOf(principal)),
      condition,
    );
  }
}
