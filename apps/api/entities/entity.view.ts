import type { EntityTypeDefinition } from './entity-types.js';
import type { TaggableEntity } from './taggable.entity.js';

/** An entity on the wire (DESIGN 5.1): its id, hostId, own fields, audit fields and sorted tagIds. */
export type EntityView = Readonly<Record<string, string | number | null | readonly string[]>>;

/** `{ total, schemas }` (or `products`, `documents`). */
export type EntityPage = Readonly<Record<string, number | readonly EntityView[]>>;

/** A text property the definition names (type-checked against the class where it is defined). */
export function textOf(source: object, property: string): string | null {
  const value: unknown = Reflect.get(source, property);
  return typeof value === 'string' ? value : null;
}

/** Sorted by code unit, the same on every platform (not by database collation). */
export const sortedIds = (ids: Iterable<string>): string[] => [...new Set(ids)].sort();

export function toEntityView(def: EntityTypeDefinition, row: TaggableEntity, tagIds: Iterable<string>): EntityView {
  return {
    [def.idField]: textOf(row, def.idField),
    hostId: row.hostId,
    ...Object.fromEntries(def.fields.map((field) => [field, textOf(row, field)])),
    updateUser: row.updateUser,
    updateTs: row.updateTs.toISOString(),
    aggregateVersion: row.aggregateVersion,
    tagIds: sortedIds(tagIds),
  };
}
