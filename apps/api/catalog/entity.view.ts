import type { Type } from '@nestjs/common';
import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { getMetadataArgsStorage } from 'typeorm';
import { ID_PATTERN, isoTime, PageFields } from '#platform';
import type { EntityTypeDefinition } from './entity-types.js';
import type { TaggableEntity } from '#database';

/** An entity on the wire (DESIGN 5.1): its id, hostId, own fields, audit fields and sorted tagIds. */
export type EntityView = Readonly<Record<string, string | number | null | readonly string[]>>;

/** `{ total, schemas, next }` (or `products`, `documents`; `total` and `next` as DESIGN 4.2 says). */
export type EntityPage = Readonly<Record<string, number | string | readonly EntityView[]>>;

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
    updateTs: isoTime(row.updateTs),
    aggregateVersion: row.aggregateVersion,
    tagIds: sortedIds(tagIds),
  };
}

/** `schema` to `Schema`, for the per-type class names (controllers, OpenAPI schemas). */
export const pascal = (word: string): string => `${word[0]?.toUpperCase() ?? ''}${word.slice(1)}`;

/** A class that exists only to carry OpenAPI metadata: `properties` in wire order, after those of `base`. */
function describedClass(
  name: string,
  properties: Readonly<Record<string, ApiPropertyOptions>>,
  base: Type<object> = class {},
): Type<unknown> {
  const described = class extends base {};
  Object.defineProperty(described, 'name', { value: name });
  for (const [property, options] of Object.entries(properties)) ApiProperty(options)(described.prototype, property);
  return described;
}

const views = new WeakMap<EntityTypeDefinition, { view: Type<unknown>; page: Type<unknown> }>();

/**
 * The OpenAPI description of `toEntityView`'s output and of the list body for one entity type, built
 * from the definition and its entity's columns (names `SchemaView`, `SchemaPage`); one per definition.
 */
export function entityViewClasses(def: EntityTypeDefinition): { view: Type<unknown>; page: Type<unknown> } {
  const known = views.get(def);
  if (known !== undefined) return known;
  const columns = new Map(
    getMetadataArgsStorage()
      .filterColumns(def.entity)
      .map((column) => [column.propertyName, column.options]),
  );
  const view = describedClass(`${pascal(def.entityType)}View`, {
    [def.idField]: { type: String, pattern: ID_PATTERN.source, example: 'AZNbq1s3dHqQeJ2dn8xv1A' },
    hostId: { type: String, nullable: true, maxLength: 22, description: 'null: a global entity' },
    ...Object.fromEntries(
      def.fields.map((field) => {
        const { nullable, length } = columns.get(field) ?? {};
        return [
          field,
          { type: String, nullable: nullable === true, ...(typeof length === 'number' && { maxLength: length }) },
        ];
      }),
    ),
    updateUser: { type: String, nullable: true, description: "the writer's sub, client_id or cid" },
    updateTs: { type: String, format: 'date-time' },
    aggregateVersion: { type: 'integer', example: 1, description: 'also sent as the ETag W/"<n>"' },
    tagIds: { type: [String], description: 'ids of the visible tags linked to it, sorted' },
  });
  const page = describedClass(`${pascal(def.entityType)}Page`, { [def.path]: { type: [view] } }, PageFields);
  const classes = { view, page };
  views.set(def, classes);
  return classes;
}
