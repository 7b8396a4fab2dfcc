import { Column, PrimaryColumn } from 'typeorm';

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

  @Column({ name: 'update_ts', type: 'timestamptz' })
  updateTs!: Date;

  @Column({ name: 'aggregate_version', type: 'integer' })
  aggregateVersion!: number;
}
