import type { ChangeEventType, EntityTable, NewChangeEvent } from '#database';
import type { Principal } from '#token-binding';

/**
 * The events a write appends to the change feed (DESIGN 12), built from what the write answers. Each event
 * carries the changed resource's host: the feed shows it to the callers who may see that resource.
 */
export function changeEvent(
  type: ChangeEventType,
  principal: Principal,
  hostId: string | null,
  data: object,
): NewChangeEvent {
  return { type, actor: principal.subject, hostId, data: { ...data } };
}

/** `entity.tagged` / `entity.untagged` for the links a write added and removed (none: no event). */
export function linkEvents(
  principal: Principal,
  table: EntityTable,
  entityId: string,
  hostId: string | null,
  added: readonly string[],
  removed: readonly string[],
): NewChangeEvent[] {
  const events: NewChangeEvent[] = [];
  if (added.length > 0) events.push(linkEvent('entity.tagged', principal, table.entityType, entityId, hostId, added));
  if (removed.length > 0) {
    events.push(linkEvent('entity.untagged', principal, table.entityType, entityId, hostId, removed));
  }
  return events;
}

/**
 * One `entity.tagged` / `entity.untagged` event. Its `tagIds` are every tag concerned, whoever can see them:
 * the feed shows each reader only the ones it can see (EventsService).
 */
export function linkEvent(
  type: 'entity.tagged' | 'entity.untagged',
  principal: Principal,
  entityType: string,
  entityId: string,
  hostId: string | null,
  tagIds: readonly string[],
): NewChangeEvent {
  return changeEvent(type, principal, hostId, { entityType, entityId, tagIds: [...tagIds].sort() });
}
