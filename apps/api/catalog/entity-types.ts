import type { Type } from '@nestjs/common';
import type { Principal } from '#token-binding';
import type { ResourceName } from '../common/access-checks.js';
import {
  ENTITY_TABLES,
  ENTITY_TYPE_NAMES,
  type EntityTable,
  type EntityTypeName,
  type TaggableEntity,
} from '#database';
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
 * One entity type, declared explicitly: its table (the id field), the descriptive fields in wire order, and
 * the sort keys (the first is the default order). The compiler checks every name against the entity class.
 */
function defineEntityType<E extends TaggableEntity>(
  table: { readonly entityType: string; readonly entity: new () => E; readonly idField: OwnTextKey<E> },
  wire: {
    readonly path: string;
    readonly body: Type<EntityBodyDto>;
    readonly fields: readonly OwnTextKey<E>[];
    readonly sortFields: readonly [OwnTextKey<E>, ...OwnTextKey<E>[]];
  },
): EntityTypeDefinition {
  return { ...table, ...wire };
}

/** The wire side of every table of ENTITY_TABLES; a new type is a table there and an entry here. */
const DEFINITIONS: { readonly [K in EntityTypeName]: EntityTypeDefinition } = {
  schema: defineEntityType(ENTITY_TABLES.schema, {
    path: 'schemas',
    body: SchemaBodyDto,
    fields: ['schemaName', 'schemaVersion', 'schemaType', 'schemaDesc', 'schemaBody'],
    sortFields: ['schemaName', 'schemaVersion', 'schemaType', 'schemaDesc'],
  }),
  product: defineEntityType(ENTITY_TABLES.product, {
    path: 'products',
    body: ProductBodyDto,
    fields: ['productName', 'productVersion', 'productDesc'],
    sortFields: ['productName', 'productVersion', 'productDesc'],
  }),
  document: defineEntityType(ENTITY_TABLES.document, {
    path: 'documents',
    body: DocumentBodyDto,
    fields: ['title', 'contentType', 'body'],
    sortFields: ['title', 'contentType'],
  }),
};

/** Every taggable entity type, in the order of ENTITY_TABLES. */
export const ENTITY_TYPES: readonly EntityTypeDefinition[] = ENTITY_TYPE_NAMES.map((name) => DEFINITIONS[name]);

/** Who wrote, when, and the version that write makes. */
export function written(
  principal: Principal,
  aggregateVersion: number,
): Pick<TaggableEntity, 'updateUser' | 'updateTs' | 'aggregateVersion'> {
  return { updateUser: principal.subject, updateTs: new Date(), aggregateVersion };
}

/** How answers name the type's entities: `schema` and `schemaId`. */
export function nameOf(def: EntityTypeDefinition): ResourceName {
  return { kind: def.entityType, idField: def.idField };
}
