import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * The table of a taggable entity type, as migration CreateEntities makes each one: the id's format check
 * `ck_<table>_id_format` and the index `ix_<table>_host_id`; `keysetIndex` is the index of its default list
 * order (migration KeysetIndexes), on an expression TypeORM cannot declare, so named and left to the migration.
 */
export const TaggableTable =
  (table: string, keysetIndex: string): ClassDecorator =>
  (target) => {
    Entity({ name: table })(target);
    Check(`ck_${table}_id_format`, `${table}_id ~ '^[A-Za-z0-9_-]{1,22}$'`)(target);
    Index(`ix_${table}_host_id`, ['hostId'])(target);
    Index(keysetIndex, { synchronize: false })(target);
  };

/** An entity's id column: `<table>_id`, 1..22 characters, primary key `pk_<table>` (DESIGN 5.1). */
export const IdColumn = (table: string): PropertyDecorator =>
  PrimaryColumn({ name: `${table}_id`, type: 'varchar', length: 22, primaryKeyConstraintName: `pk_${table}` });

/** A text column; `length` undefined means unbounded `text`. */
export const TextColumn = (name: string, length?: number, nullable = true): PropertyDecorator =>
  Column({ name, type: length === undefined ? 'text' : 'varchar', length, nullable });

/**
 * Columns every taggable entity carries besides its id and its own fields (migration CreateEntities).
 * Not an entity itself: each entity type extends it with its id and descriptive columns.
 */
export abstract class TaggableEntity {
  @TextColumn('host_id', 22)
  hostId!: string | null;

  @TextColumn('update_user', 255)
  updateUser!: string | null;

  @Column({ name: 'update_ts', type: 'timestamptz', default: () => 'now()' })
  updateTs!: Date;

  @Column({ name: 'aggregate_version', type: 'integer', default: 1 })
  aggregateVersion!: number;
}
