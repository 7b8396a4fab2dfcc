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
  const data = (tagIds: readonly string[]) => ({ entityType: table.entityType, entityId, tagIds: [...tagIds].sort() });
  if (added.length > 0) events.push(changeEvent('entity.tagged', principal, hostId, data(added)));
  if (removed.length > 0) events.push(changeEvent('entity.untagged', principal, hostId, data(removed)));
  return events;
}
