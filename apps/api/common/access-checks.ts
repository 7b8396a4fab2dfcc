import { notFound, preconditionFailed } from '#platform';
import type { Principal } from '#token-binding';
import { versionMatches, type VersionCondition } from './etag.js';
import { assertCanWrite, canSee } from './host-access.js';

/** How answers name a kind of resource: `tag` with its id field `tagId`, `schema` with `schemaId`. */
export interface ResourceName {
  readonly kind: string;
  readonly idField: string;
}

/** A host-scoped, versioned row (tags and entities). */
interface VersionedRow {
  readonly hostId: string | null;
  readonly aggregateVersion: number;
}

/** The row, or 404: another host's row is answered exactly like a missing one (DESIGN 4.3). */
export function visibleRow<T extends { readonly hostId: string | null }>(
  principal: Principal,
  name: ResourceName,
  id: string,
  row: T | null,
): T {
  if (row === null || !canSee(principal, row.hostId)) throw notFound(`No ${name.kind} with ${name.idField} ${id}`);
  return row;
}

/**
 * The checks of every versioned write, in order: 404 for a row the caller cannot see, 403 when it may not
 * write it, 412 when `If-Match` names another version. `row` was read FOR UPDATE in the writing
 * transaction, so its version cannot move before the write.
 */
export function writableRow<T extends VersionedRow>(
  principal: Principal,
  name: ResourceName,
  id: string,
  row: T | null,
  condition: VersionCondition,
): T {
  const visible = visibleRow(principal, name, id, row);
  assertCanWrite(principal, visible.hostId, name.kind);
  if (!versionMatches(condition, visible.aggregateVersion)) {
    throw preconditionFailed(`${name.kind} ${id} is at version ${visible.aggregateVersion}, not the one in If-Match`);
  }
  return visible;
}
