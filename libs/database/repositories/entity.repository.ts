import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type SelectQueryBuilder } from 'typeorm';
import type { EntityTable } from '../entities/entity-tables.js';
import type { TaggableEntity } from '../entities/taggable.entity.js';
import { namedParameters, withTieBreaker, type Keyset, type KeysetPage, type KeyValue } from '../keyset.js';
import {
  BaseRepository,
  duplicateKeyOf,
  visibilityCondition,
  whereVisible,
  type HostVisibility,
} from '../repository.js';
import type { SortOrder } from '../sort-order.js';

/** The tag part of a list filter: tag ids already resolved from names. */
export interface TagCondition {
  readonly tagIds: readonly string[];
  readonly match: 'any' | 'all';
}

export interface EntityListOptions {
  readonly visibility: HostVisibility;
  readonly offset: number;
  readonly limit: number;
  readonly sort: readonly SortOrder<string>[];
  readonly hostId?: string;
  readonly tags?: TagCondition;
  /** A cursor's row (its sort values and id): the page starts after it. */
  readonly after?: readonly KeyValue[];
  /** Count every match (`total`); default true. */
  readonly withTotal?: boolean;
}

/**
 * The rows of every taggable entity type (schemas, products, documents), one generic implementation over
 * the type's `EntityTable`. Their links live in `EntityLinkRepository`; the service writes both in one
 * transaction. A duplicate id surfaces as `DuplicateKeyError`.
 */
@Injectable()
export class EntityRepository extends BaseRepository {
  constructor(@InjectDataSource() db: DataSource) {
    super(db);
  }

  /** The column behind a property of the table's entity, from TypeORM's metadata. */
  columnOf(table: EntityTable, property: string): string {
    const column = this.manager.connection.getMetadata(table.entity).findColumnWithPropertyName(property);
    if (column === undefined) throw new Error(`${table.entityType} has no column for ${property}`);
    return column.databaseName;
  }

  async insert(table: EntityTable, row: TaggableEntity): Promise<void> {
    try {
      await this.manager.getRepository(table.entity).insert(row);
    } catch (error) {
      throw duplicateKeyOf(error);
    }
  }

  /**
   * The row, or null. Plain SQL mapped through the entity's metadata: every tagging write starts here, and the
   * query builder cost more than the read.
   */
  async findById(table: EntityTable, id: string): Promise<TaggableEntity | null> {
    return this.selectById(table, id, '', [id]);
  }

  /**
   * The row when `visibility` sees it, held (FOR UPDATE) until the transaction ends, or null: another host's
   * row is neither waited for nor held, so naming it cannot make that host's writes wait.
   */
  async lockVisible(table: EntityTable, id: string, visibility: HostVisibility): Promise<TaggableEntity | null> {
    const parameters: unknown[] = [id];
    const visible = visibilityCondition(visibility, this.columnOf(table, 'hostId'), parameters);
    return this.selectById(table, id, `${visible} for update`, parameters);
  }

  private async selectById(
    table: EntityTable,
    id: string,
    rest: string,
    parameters: unknown[],
  ): Promise<TaggableEntity | null> {
    const metadata = this.manager.connection.getMetadata(table.entity);
    // Named columns: a prepared `select *` fails (0A000) once a release adds a column (DESIGN 15).
    const columns = metadata.columns.map((c) => `"${c.databaseName}"`).join(', ');
    const rows = await this.rows<Record<string, unknown>>(
      `select ${columns} from ${metadata.tableName} where ${this.columnOf(table, table.idField)} = $1 ${rest}`,
      parameters,
    );
    const row = rows[0];
    if (row === undefined) return null;
    const entity = new table.entity();
    for (const column of metadata.columns) {
      (entity as unknown as Record<string, unknown>)[column.propertyName] = row[column.databaseName];
    }
    return entity;
  }

  async update(table: EntityTable, id: string, row: TaggableEntity): Promise<void> {
    await this.manager.getRepository(table.entity).update(id, row);
  }

  /** Sets only who changed the entity, when, and its next version: a change that touched only its links. */
  async updateVersion(
    table: EntityTable,
    id: string,
    row: Pick<TaggableEntity, 'updateUser' | 'updateTs' | 'aggregateVersion'>,
  ): Promise<void> {
    const metadata = this.manager.connection.getMetadata(table.entity);
    await this.manager.query(
      `update ${metadata.tableName} set update_user = $2, update_ts = $3, aggregate_version = $4
       where ${this.columnOf(table, table.idField)} = $1`,
      [id, row.updateUser, row.updateTs, row.aggregateVersion],
    );
  }

  async delete(table: EntityTable, id: string): Promise<void> {
    await this.manager.getRepository(table.entity).delete(id);
  }

  /**
   * The ORDER BY of a list sorted by `sort`, the id breaking ties (so paging is stable). Names and other text
   * sort case-insensitively, as tags do; ids and times as stored. The default order (the name, then the id)
   * has an index of its own (migration KeysetIndexes).
   */
  keyset(table: EntityTable, sort: readonly SortOrder<string>[]): Keyset {
    const nullable = (property: string): boolean =>
      this.manager.connection.getMetadata(table.entity).findColumnWithPropertyName(property)?.isNullable === true;
    const column = (key: string, descending: boolean) => {
      const sql = `e.${this.columnOf(table, key)}`;
      if (key === table.idField) return { sql, type: 'text' as const, descending };
      if (key === 'updateTs') return { sql, type: 'timestamp' as const, descending };
      return { sql: `lower(${sql})`, type: 'text' as const, descending, nullable: nullable(key) };
    };
    const columns = sort.map(({ key, descending }) => column(key, descending));
    return withTieBreaker(columns, column(table.idField, false));
  }

  async page(table: EntityTable, options: EntityListOptions): Promise<KeysetPage<TaggableEntity>> {
    const { page, count } = this.listQueries(table, options);
    const [read, counted] = await Promise.all([
      page.getRawAndEntities(),
      options.withTotal === false ? undefined : count.getRawOne<{ total: string }>(),
    ]);
    const { rows, next } = this.keyset(table, options.sort).pageOf(
      read.entities,
      options.limit,
      (_, i) => read.raw[i] as object,
    );
    return { rows, next, ...(counted === undefined ? {} : { total: Number(counted?.total ?? 0) }) };
  }

  /**
   * The page and count queries of a list (`page` runs exactly these; the page reads one row more than
   * `limit`, to know whether a match follows). The tag filter is a semi-join on `entity_tag` driven by
   * `ix_entity_tag_tag (tag_id, entity_type, entity_id)`: `any` is an EXISTS, `all` starts from the rarest
   * named tag's links (`allTagged`).
   */
  listQueries(
    table: EntityTable,
    options: EntityListOptions,
  ): { page: SelectQueryBuilder<TaggableEntity>; count: SelectQueryBuilder<TaggableEntity> } {
    const id = `e.${this.columnOf(table, table.idField)}`;
    const base = whereVisible(
      this.manager.getRepository(table.entity).createQueryBuilder('e'),
      options.visibility,
      'e.host_id',
    );
    if (options.hostId !== undefined) base.andWhere('e.host_id = :hostId', { hostId: options.hostId });
    const tags = options.tags;
    if (tags !== undefined) {
      const links = 'from entity_tag et where et.entity_type = :entityType and et.tag_id = any(:tagIds)';
      const parameters = { entityType: table.entityType, tagIds: tags.tagIds, tagCount: tags.tagIds.length };
      base.andWhere(
        tags.match === 'any' ? `exists (select 1 ${links} and et.entity_id = ${id})` : allTagged(id),
        parameters,
      );
    }
    const count = base.clone().select('count(*)', 'total');
    const keyset = this.keyset(table, options.sort);
    const page = base.clone();
    if (options.after !== undefined) {
      const parameters: Record<string, unknown> = {};
      page.andWhere(keyset.after(options.after, namedParameters(parameters)), parameters);
    }
    for (const { sql, alias } of keyset.selectItems()) page.addSelect(sql, alias);
    for (const { sql, direction, nulls } of keyset.orderItems()) page.addOrderBy(sql, direction, nulls);
    page.offset(options.offset).limit(options.limit + 1);
    return { page, count };
  }
}

/**
 * `tagMatch=all`: the entities linked to every one of `:tagIds`. The candidates are the links of the named tag
 * with the fewest links of the type (its `tag_usage` counters, read once as an InitPlan), each then checked on
 * the primary key for the others: the cost follows the rarest tag, not the most popular one (bench scale: a
 * popular tag's 33,000 links were grouped for every page). The primary key makes each link unique, so the
 * count cannot double up; a named tag without links has no counter and leaves no candidate that passes.
 */
function allTagged(id: string): string {
  const rarest = `(select u.tag_id from tag_usage u where u.tag_id = any(:tagIds) and u.entity_type = :entityType
      group by u.tag_id order by sum(u.links), u.tag_id limit 1)`;
  return `${id} in (select r.entity_id from entity_tag r where r.entity_type = :entityType and r.tag_id = ${rarest}
      and (select count(*) from entity_tag o
            where o.entity_type = :entityType and o.entity_id = r.entity_id and o.tag_id = any(:tagIds)) = :tagCount)`;
}
