import { DocumentEntity } from './document.entity.js';
import { ProductEntity } from './product.entity.js';
import { SchemaEntity } from './schema.entity.js';
import type { TaggableEntity } from './taggable.entity.js';

/** What storage needs to know of one taggable entity type (the api's definition adds wire names and bodies). */
export interface EntityTable {
  /** The `entityType` value, stored in `entity_tag.entity_type`. */
  readonly entityType: string;
  readonly entity: new () => TaggableEntity;
  /** The id property (`schemaId`): the entity's primary column. */
  readonly idField: string;
}

/**
 * Every taggable entity type's table, keyed by its `entityType`. The declaration order is the order of
 * every list of types: usage counts on the wire and the order in which a tag's deletion locks entities.
 */
export const ENTITY_TABLES = {
  schema: { entityType: 'schema', entity: SchemaEntity, idField: 'schemaId' },
  product: { entityType: 'product', entity: ProductEntity, idField: 'productId' },
  document: { entityType: 'document', entity: DocumentEntity, idField: 'documentId' },
} as const satisfies Readonly<Record<string, EntityTable>>;

export type EntityTypeName = keyof typeof ENTITY_TABLES;

/** The `entityType` values, in declaration order. */
export const ENTITY_TYPE_NAMES = Object.keys(ENTITY_TABLES) as readonly EntityTypeName[];

/** The tables, in declaration order. */
export const TAGGABLE_TABLES: readonly EntityTable[] = Object.values(ENTITY_TABLES);
