import { badRequest, ProblemException } from '#platform';
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

/**
 * 400 naming the requested tags (known, visible to the caller) that the entity's host cannot see: DESIGN 12
 * moves no entity away from its tags' hosts, so no write may link it to them either.
 */
export function assertLinkable(entityHost: string | null, tags: readonly LinkedTag[]): void {
  const hidden = tags.filter((tag) => !hostSees(entityHost, tag.hostId)).map((tag) => tag.tagId);
  if (hidden.length === 0) return;
  const where = entityHost === null ? 'a global entity (only global tags are)' : `an entity of host ${entityHost}`;
  throw badRequest(
    `Tags not visible to ${where}: ${hidden.join(', ')}`,
    hidden.map((tagId) => ({ field: 'tagIds', message: `tag ${tagId} is not visible to the entity's host` })),
  );
}

/**
 * An entity (`what`: its type and id) moves to `hostId` only if that host can see every tag it is to be linked
 * to (DESIGN 12): else 409 naming those of them that `shown` (the caller) sees, since links made before that
 * rule may reach other hosts' tags. The caller checks before the first write of its transaction.
 */
export function assertMovable(
  what: string,
  hostId: string | null,
  linked: readonly LinkedTag[],
  shown: (tag: LinkedTag) => boolean,
): void {
  const hidden = linked.filter((tag) => !hostSees(hostId, tag.hostId));
  if (hidden.length === 0) return;
  const named = hidden.filter(shown).map((tag) => tag.tagId);
  const where = hostId === null ? 'global (only global tags are visible there)' : `host ${hostId}`;
  const which = named.length === 0 ? '' : `: ${named.join(', ')}`;
  throw new ProblemException(
    409,
    `${what} cannot move to ${where}: it would be linked to tags that host cannot see${which}. ` +
      'Remove those links first, or give tagIds without them.',
    {
      errors:
        named.length === 0
          ? [{ field: 'hostId', message: 'the entity is linked to tags the new host cannot see' }]
          : named.map((tagId) => ({ field: 'tagIds', message: `tag ${tagId} is not visible to the new host` })),
    },
  );
}

/** What a token of `host` sees (DESIGN 4.3): global tags and its own host's; for `host` null, global ones only. */
export function hostSees(host: string | null, tagHost: string | null): boolean {
  return tagHost === null || tagHost === host;
}
