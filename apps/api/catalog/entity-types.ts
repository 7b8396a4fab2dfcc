import type { Type } from '@nestjs/common';
import { DocumentEntity, ProductEntity, SchemaEntity, type EntityTable, type TaggableEntity } from '#database';
import { DocumentBodyDto } from './dto/document-body.dto.js';
import type { EntityBodyDto } from './dto/entity-body.dto.js';
import { ProductBodyDto } from './dto/product-body.dto.js';
import { SchemaBodyDto } from './dto/schema-body.dto.js';

/**
 * What the generic service and controller need to know about one entity type. Everything else
 * (visibility, versions, tags, filtering, paging) is the same for every type.
 */
export interface EntityTypeDefinition extends EntityTable {
  /** Path segment of the resource, also the key of the list body (`{ total, schemas }`). */
  readonly path: string;
  readonly body: Type<EntityBodyDto>;
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
 * One entity type, declared explicitly: the id field, the descriptive fields in wire order, and the sort
 * keys (the first is the default order). The compiler checks every name against the entity class.
 */
function defineEntityType<E extends TaggableEntity>(definition: {
  readonly entityType: string;
  readonly path: string;
  readonly entity: new () => E;
  readonly body: Type<EntityBodyDto>;
  readonly idField: OwnTextKey<E>;
  readonly fields: readonly OwnTextKey<E>[];
  readonly sortFields: readonly [OwnTextKey<E>, ...OwnTextKey<E>[]];
}): EntityTypeDefinition {
  return definition;
}

/** Every taggable entity type; a new one is an entry here, its entity and body classes and its table. */
export const ENTITY_TYPES: readonly EntityTypeDefinition[] = [
  defineEntityType({
    entityType: 'schema',
    path: 'schemas',
    entity: SchemaEntity,
    body: SchemaBodyDto,
    idField: 'schemaId',
    fields: ['schemaName', 'schemaVersion', 'schemaType', 'schemaDesc', 'schemaBody'],
    sortFields: ['schemaName', 'schemaVersion', 'schemaType', 'schemaDesc'],
  }),
  defineEntityType({
    entityType: 'product',
    path: 'products',
    entity: ProductEntity,
    body: ProductBodyDto,
    idField: 'productId',
    fields: ['productName', 'productVersion', 'productDesc'],
    sortFields: ['productName', 'productVersion', 'productDesc'],
  }),
  defineEntityType({
    entityType: 'document',
    path: 'documents',
    entity: DocumentEntity,
    body: DocumentBodyDto,
    idField: 'documentId',
    fields: ['title', 'contentType', 'body'],
    sortFields: ['title', 'contentType'],
  }),
];
