import { HostIdField, TagIdsField } from './fields.js';

/** Fields of every entity body; each type's body adds its id and descriptive fields (DESIGN 5.1). */
export abstract class EntityBodyDto {
  /** null or omitted: a global entity. */
  @HostIdField() hostId?: string | null;

  /** Omitted on PUT: the links stay as they are (DESIGN 5.2). */
  @TagIdsField(false) tagIds?: string[];
}

/**
 * A validated body as the generic service reads it: hostId and tagIds by name, the type's own
 * fields by the names its definition lists.
 */
export interface EntityInput {
  readonly hostId?: string | null;
  readonly tagIds?: readonly string[];
  readonly [field: string]: unknown;
}
