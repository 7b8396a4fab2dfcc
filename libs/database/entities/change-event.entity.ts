import { Column, Entity, PrimaryColumn } from 'typeorm';

export const CHANGE_EVENT_TYPES = [
  'tag.created',
  'tag.updated',
  'tag.deleted',
  'entity.created',
  'entity.updated',
  'entity.deleted',
  'entity.tagged',
  'entity.untagged',
] as const;
export type ChangeEventType = (typeof CHANGE_EVENT_TYPES)[number];

/** One change in the feed (table `change_event`, migration CreateChangeEvent, DESIGN 12). */
@Entity({ name: 'change_event' })
export class ChangeEvent {
  /** Taken at the end of the writing transaction; bigint, so read as a string by the driver. */
  @PrimaryColumn({ name: 'seq', type: 'bigint', primaryKeyConstraintName: 'pk_change_event' })
  seq!: string;

  @Column({ name: 'type', type: 'varchar', length: 32 })
  type!: ChangeEventType;

  @Column({ name: 'at', type: 'timestamptz' })
  at!: Date;

  @Column({ name: 'actor', type: 'varchar', length: 255, nullable: true })
  actor!: string | null;

  /** The changed resource's host: the feed shows an event to the callers who may see that resource. */
  @Column({ name: 'host_id', type: 'varchar', length: 22, nullable: true })
  hostId!: string | null;

  @Column({ name: 'data', type: 'jsonb' })
  data!: Record<string, unknown>;
}
