import { Injectable } from '@nestjs/common';
import {
  ChangeEventRepository,
  DuplicateKeyError,
  EntityLinkRepository,
  EntityRepository,
  TagRepository,
  UnitOfWork,
  type TagCondition,
  type TaggableEntity,
  type Tx,
} from '#database';
import { badRequest, conflict, newId, parseSort, pageBody, pageWindow } from '#platform';
import type { Principal } from '#token-binding';
import { visibleRow, writableRow } from '../common/access-checks.js';
import type { VersionCondition } from '../common/etag.js';
import { assertCanWrite, canSee, visibilityOf } from '../common/host-access.js';
import { changeEvent, linkEvents } from '../events/change-events.js';
import { toTagView, type TagView } from '../tags/tag.view.js';
import type { EntityInput } from './dto/entity-body.dto.js';
import type { ListEntitiesQuery } from './dto/list-entities.query.js';
import { nameOf, written, type EntityTypeDefinition } from './entity-types.js';
import { sortedIds, textOf, toEntityView, type EntityPage, type EntityView } from './entity.view.js';
import {
  assertLinkable,
  assertMovable,
  knownTags,
  NO_CHANGE,
  type LinkChange,
  type LinkedTag,
  type RequestedTags,
} from './tag-links.js';

/**
 * Create, read, update, delete, tag and list entities of any type in ENTITY_TYPES. The definition
 * says which table and fields; every rule (DESIGN 4.3, 5.2) lives here once.
 */
@Injectable()
export class EntitiesService {
  constructor(
    private readonly work: UnitOfWork,
    private readonly entities: EntityRepository,
    private readonly links: EntityLinkRepository,
    private readonly tagStore: TagRepository,
    private readonly events: ChangeEventRepository,
  ) {}

  async create(def: EntityTypeDefinition, principal: Principal, input: EntityInput): Promise<EntityView> {
    const hostId = input.hostId ?? null;
    assertCanWrite(principal, hostId, def.entityType);
    const id = textOf(input, def.idField) ?? newId();
    return this.work.run(async (tx) => {
      const tags = knownTags(await this.requestedTags(tx, principal, input.tagIds ?? []));
      assertLinkable(hostId, tags);
      const tagIds = tags.map((tag) => tag.tagId);
      const row = Object.assign(new def.entity(), {
        ...ownFields(def, input),
        [def.idField]: id,
        hostId,
        ...written(principal, 1),
      });
      try {
        await this.entities.in(tx).insert(def, row);
      } catch (error) {
        // The id is the table's only unique key.
        if (error instanceof DuplicateKeyError) {
          throw conflict(`A ${def.entityType} with ${def.idField} ${id} already exists`);
        }
        throw error;
      }
      const added = tagIds.length === 0 ? [] : (await this.links.in(tx).link(def.entityType, id, hostId, tagIds)).added;
      const view = toEntityView(def, row, tagIds);
      await this.events
        .in(tx)
        .append([
          changeEvent('entity.created', principal, hostId, { entityType: def.entityType, ...view }),
          ...linkEvents(principal, def, id, hostId, added, []),
        ]);
      return view;
    });
  }

  /** GET /{type}: filtered by host and tag names, sorted, from an offset or after a cursor's entity. */
  async list(def: EntityTypeDefinition, principal: Principal, query: ListEntitiesQuery): Promise<EntityPage> {
    const sort = parseSort(query.sort, [...def.sortFields, def.idField, 'updateTs'], def.sortFields[0]);
    const visibility = visibilityOf(principal);
    const names = query.tagNames ?? [];
    const filter = { visibility, hostId: query.hostId, tagNames: names.map((n) => n.toLowerCase()).sort(), sort };
    const scope = { list: def.path, filter: names.length > 0 ? { ...filter, tagMatch: query.tagMatch } : filter };
    const window = pageWindow(query, scope, this.entities.keyset(def, sort).accepts);
    let tags: TagCondition | undefined;
    if (names.length > 0) {
      const found = await this.tagStore.idsNamed(visibility, names);
      // A name that names no visible tag matches nothing: with `all` no entity can carry every name.
      if (found.length === 0 || (query.tagMatch === 'all' && found.length < names.length)) {
        return pageBody(window, scope, { total: 0 }, def.path, []);
      }
      tags = { tagIds: found, match: query.tagMatch };
    }
    const page = await this.entities.page(def, { ...window, visibility, sort, hostId: query.hostId, tags });
    const ids = page.rows.map((row) => idOf(def, row));
    const links = await this.links.tagIdsOf(def.entityType, ids, visibility);
    const views = page.rows.map((row) => toEntityView(def, row, links.get(idOf(def, row)) ?? []));
    return pageBody(window, scope, page, def.path, views);
  }

  async get(def: EntityTypeDefinition, principal: Principal, id: string): Promise<EntityView> {
    const row = visibleRow(principal, nameOf(def), id, await this.entities.findById(def, id));
    return this.view(this.links, def, principal, row);
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
    return this.work.run(async (tx) => {
      const requested = input.tagIds === undefined ? undefined : await this.requestedTags(tx, principal, input.tagIds);
      const current = await this.lockWritable(tx, def, principal, id, condition);
      assertCanWrite(principal, hostId, def.entityType);
      const tags = requested === undefined ? undefined : knownTags(requested);
      if (hostId !== current.hostId) {
        const linked = tags ?? (await this.links.in(tx).linkedTags(def.entityType, id));
        assertMovable(`${def.entityType} ${id}`, hostId, linked, (tag) => canSee(principal, tag.hostId));
        await this.links.in(tx).rehost(def.entityType, id, hostId);
      }
      const changed = tags === undefined ? NO_CHANGE : await this.replaceLinks(tx, def, id, hostId, tags);
      const { view, tagIds } = await this.save(tx, def, principal, current, { ...ownFields(def, input), hostId });
      await this.events
        .in(tx)
        .append([
          changeEvent('entity.updated', principal, hostId, { entityType: def.entityType, ...view, tagIds }),
          ...linkEvents(principal, def, id, hostId, changed.added, changed.removed),
        ]);
      return view;
    });
  }

  /** Removes the entity and, in the same transaction, its links (entity_tag has no foreign key to it). */
  async delete(
    def: EntityTypeDefinition,
    principal: Principal,
    id: string,
    condition: VersionCondition,
  ): Promise<void> {
    await this.work.run(async (tx) => {
      const current = await this.lockWritable(tx, def, principal, id, condition);
      await this.links.in(tx).unlinkAll(def.entityType, id);
      await this.entities.in(tx).delete(def, id);
      const data = { entityType: def.entityType, entityId: id, hostId: current.hostId };
      await this.events.in(tx).append([changeEvent('entity.deleted', principal, current.hostId, data)]);
    });
  }

  /** GET /{type}/{id}/tags: the visible tags of a visible entity, sorted by name as GET /tags sorts. */
  async tags(def: EntityTypeDefinition, principal: Principal, id: string): Promise<TagView[]> {
    visibleRow(principal, nameOf(def), id, await this.entities.findById(def, id));
    const tags = await this.links.tagsOf(def.entityType, id, visibilityOf(principal));
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
    return this.work.run(async (tx) => {
      const requested = await this.requestedTags(tx, principal, tagIds);
      const current = await this.lockWritable(tx, def, principal, id, condition);
      const changed = await this.replaceLinks(tx, def, id, current.hostId, knownTags(requested));
      const { view } = await this.save(tx, def, principal, current, {});
      await this.events.in(tx).append(linkEvents(principal, def, id, current.hostId, changed.added, changed.removed));
      return view;
    });
  }

  /**
   * Writes `changes` plus the audit fields and the next version; answers the new representation (the linked
   * tags the writer can see) and every linked tag id, for the change event (the feed filters per reader).
   */
  private async save(
    tx: Tx,
    def: EntityTypeDefinition,
    principal: Principal,
    current: TaggableEntity,
    changes: Record<string, unknown>,
  ): Promise<{ view: EntityView; tagIds: string[] }> {
    const next = Object.assign(current, changes, written(principal, current.aggregateVersion + 1));
    await this.entities.in(tx).update(def, idOf(def, next), next);
    const linked = await this.links.in(tx).linkedTags(def.entityType, idOf(def, next));
    const visible = linked.filter((tag) => canSee(principal, tag.hostId)).map((tag) => tag.tagId);
    return { view: toEntityView(def, next, visible), tagIds: linked.map((tag) => tag.tagId) };
  }

  /** The representation with the linked tags the caller can see (others are left out, DESIGN 4.3). */
  private async view(
    links: EntityLinkRepository,
    def: EntityTypeDefinition,
    principal: Principal,
    row: TaggableEntity,
  ): Promise<EntityView> {
    const byEntity = await links.tagIdsOf(def.entityType, [idOf(def, row)], visibilityOf(principal));
    return toEntityView(def, row, byEntity.get(idOf(def, row)) ?? []);
  }

  /**
   * Looks up the requested tags the caller can see (`knownTags` answers 400 for the others), locking them
   * so they cannot be deleted until the transaction ends and the links can always be written. Writers call
   * it before locking the entity: tags first, then entities, the order a tag's deletion takes them too,
   * so a write and a deletion never wait for each other in a circle. A batch looks up all its operations' tags at once.
   */
  async requestedTags(tx: Tx, principal: Principal, requested: readonly string[]): Promise<RequestedTags> {
    const ids = sortedIds(requested);
    const hosts =
      ids.length === 0
        ? new Map<string, string | null>()
        : await this.tagStore.in(tx).existingHosts(visibilityOf(principal), ids);
    return { ids, hosts };
  }

  /**
   * Makes the entity's links exactly `tags` (known, visible to the caller; 400 unless its host `hostId` sees
   * them too): links to other tags go, missing ones are added.
   */
  private async replaceLinks(
    tx: Tx,
    def: EntityTypeDefinition,
    id: string,
    hostId: string | null,
    tags: readonly LinkedTag[],
  ): Promise<LinkChange> {
    assertLinkable(hostId, tags);
    const tagIds = tags.map((tag) => tag.tagId);
    const links = this.links.in(tx);
    const removed = await links.unlinkOthers(def.entityType, id, tagIds);
    const added = tagIds.length === 0 ? [] : (await links.link(def.entityType, id, hostId, tagIds)).added;
    return { added, removed };
  }

  /** The entity, held (FOR UPDATE) until the transaction ends, once the caller may write it at the If-Match version. */
  private async lockWritable(
    tx: Tx,
    def: EntityTypeDefinition,
    principal: Principal,
    id: string,
    condition: VersionCondition,
  ): Promise<TaggableEntity> {
    return writableRow(
      principal,
      nameOf(def),
      id,
      await this.entities.in(tx).lockVisible(def, id, visibilityOf(principal)),
      condition,
    );
  }
}

/** The type's own fields from a body; an omitted optional field is stored as null (PUT replaces). */
function ownFields(def: EntityTypeDefinition, input: EntityInput): Record<string, string | null> {
  return Object.fromEntries(def.fields.map((field) => [field, textOf(input, field)]));
}

function idOf(def: EntityTypeDefinition, row: TaggableEntity): string {
  return textOf(row, def.idField) ?? '';
}
