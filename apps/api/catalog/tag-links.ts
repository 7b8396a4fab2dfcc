import { badRequest } from '#platform';
import { MAX_TAGS_PER_ENTITY } from './dto/fields.js';
import type { EntityTypeDefinition } from './entity-types.js';

// The rules of an entity's tag links (DESIGN 5.2), shared by the entity writes and the batch.

/** The links a write added and removed (tag ids). */
export interface LinkChange {
  readonly added: readonly string[];
  readonly removed: readonly string[];
}

export const NO_CHANGE: LinkChange = { added: [], removed: [] };

/**
 * Requested tag ids (sorted, distinct) and the host of each that names a tag the caller can see (`hosts` may
 * hold more tags than `ids`: a batch looks up every operation's tags at once).
 */
export interface RequestedTags {
  readonly ids: readonly string[];
  readonly hosts: ReadonlyMap<string, string | null>;
}

export interface LinkedTag {
  readonly tagId: string;
  readonly hostId: string | null;
}

/**
 * Adding (`add`) or removing the links to `tagIds` (known, visible tags) on an entity whose links are now
 * `linked` (every host's tags): the links that change, or 400 when the entity would carry more than
 * MAX_TAGS_PER_ENTITY tags. The caller holds the entity's row lock, so `linked` cannot move meanwhile.
 */
export function tagChange(
  def: EntityTypeDefinition,
  id: string,
  op: 'add' | 'remove',
  tagIds: readonly string[],
  linked: ReadonlySet<string>,
): LinkChange {
  if (op === 'remove') return { added: [], removed: tagIds.filter((tagId) => linked.has(tagId)) };
  const added = tagIds.filter((tagId) => !linked.has(tagId));
  const total = linked.size + added.length;
  if (total > MAX_TAGS_PER_ENTITY) {
    throw badRequest(`${def.entityType} ${id} would have ${total} tags; at most ${MAX_TAGS_PER_ENTITY} are allowed`, [
      { field: 'tagIds', message: `at most ${MAX_TAGS_PER_ENTITY} tags per entity` },
    ]);
  }
  return { added, removed: [] };
}

/** The requested tags, or 400 listing the ids that name no tag the caller can see (DESIGN 5.2). */
export function knownTags(requested: RequestedTags): LinkedTag[] {
  const unknown = requested.ids.filter((tagId) => !requested.hosts.has(tagId));
  if (unknown.length > 0) {
    throw badRequest(
      `Unknown tag ids: ${unknown.join(', ')}`,
      unknown.map((tagId) => ({ field: 'tagIds', message: `no tag with tagId ${tagId}` })),
    );
  }
  return requested.ids.map((tagId) => ({ tagId, hostId: requested.hosts.get(tagId) ?? null }));
}

/** What a token of `host` sees (DESIGN 4.3): global tags and its own host's; for `host` null, global ones only. */
export function hostSees(host: string | null, tagHost: string | null): boolean {
  return tagHost === null || tagHost === host;
}
