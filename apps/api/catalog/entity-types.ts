import type { Type } from '@nestjs/common';
import { getMetadataArgsStorage } from 'typeorm';
import { DocumentEntity } from './document.entity.js';
import { DocumentBodyDto } from './dto/document-body.dto.js';
import type { EntityBodyDto } from './dto/entity-body.dto.js';
import { ProductBodyDto } from './dto/product-body.dto.js';
import { SchemaBodyDto } from './dto/schema-body.dto.js';
import { ProductEntity } from './product.entity.js';
import { SchemaEntity } from './schema.entity.js';
import type { TaggableEntity } from './taggable.entity.js';

/**
 * What the generic service and controller need to know about one entity type. Everything else
 * (visibility, versions, tags, filtering, paging) is the same for every type.
 */
export interface EntityTypeDefinition {
  /** The `entityType` value (DESIGN 5.1), stored in `entity_tag.entity_type`. */
  readonly entityType: string;
  /** Path segment of the resource, also the key of the list body (`{ total, schemas }`). */
  readonly path: string;
  readonly entity: new () => TaggableEntity;
  readonly body: Type<EntityBodyDto>;
  /** The id property (`schemaId`): the entity's primary column. */
  readonly idField: string;
  /** The type's own descriptive properties, in wire order: the entity's other columns. */
  readonly fields: readonly string[];
  /** Properties `sort` accepts besides the id and `updateTs`; the first (the name) is the default order. */
  readonly sortFields: readonly [string, ...string[]];
}

/** A text property of `E` other than the ones every taggable entity has. */
type OwnTextKey<E> = Exclude<
  { [K in keyof E]-?: E[K] extends string | null ? K : never }[keyof E],
  keyof TaggableEntity
> &
  string;

/**
 * Completes a definition from its entity class: the primary column is the id field, the class's other
 * columns (in declaration order, the name first) are the descriptive fields, and the bounded ones
 * (varchar, not text) are the sort keys. The body's field types are checked against the class.
 */
function defineEntityType<E extends TaggableEntity>(definition: {
  readonly entityType: string;
  readonly path: string;
  readonly entity: new () => E;
  readonly body: Type<EntityBodyDto & Partial<Record<OwnTextKey<E>, string | null>>>;
}): EntityTypeDefinition {
  const columns = getMetadataArgsStorage().filterColumns(definition.entity);
  const [id, ...own] = columns;
  const [name, ...sortable] = own.filter((column) => column.options.type === 'varchar');
  if (id?.options.primary !== true || name === undefined) {
    throw new Error(`${definition.entity.name} must declare its id column, then its name column`);
  }
  return {
    ...definition,
    idField: id.propertyName,
    fields: own.map((column) => column.propertyName),
    sortFields: [name.propertyName, ...sortable.map((column) => column.propertyName)],
  };
}

/** Every taggable entity type; a new one is a line here, its entity and body classes and its table. */
export const ENTITY_TYPES: readonly EntityTypeDefinition[] = [
  defineEntityType({ entityType: 'schema', path: 'schemas', entity: SchemaEntity, body: SchemaBodyDto }),
  defineEntityType({ entityType: 'product', path: 'products', entity: ProductEntity, body: ProductBodyDto }),
  defineEntityType({ entityType: 'document', path: 'documents', entity: DocumentEntity, body: DocumentBodyDto }),
];
