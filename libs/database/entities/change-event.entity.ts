import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

export const CHANGE_EVENT_TYPES = [
  'tag.created',
  'tag.updated',
  'tag.deleted',
  'entity.created',
  'entity.updated',
  'entity.deleted',
  'entity.tagged',
  'entity.untagged',
  'config.changed',
] as const;
export type ChangeEventType = (typeof CHANGE_EVENT_TYPES)[number];

/** One change in the feed (table `change_event`, migration CreateChangeEvent, DESIGN 12). */
@Entity({ name: 'change_event' })
@Check('ck_change_event_type', `type in (${CHANGE_EVENT_TYPES.map((type) => `'${type}'`).join(', ')})`)
@Check('ck_change_event_data', `jsonb_typeof(data) = 'object'`)
@Check('ck_change_event_tag_hosts', `tag_hosts is null or jsonb_typeof(tag_hosts) = 'object'`)
// A BRIN: `at` grows with `seq`, so pruning by age costs almost nothing per insert.
@Index('ix_change_event_at', ['at'], { type: 'brin' })
export class ChangeEvent {
  /** Taken at the end of the writing transaction; bigint, so read as a string by the driver. */
  @PrimaryColumn({ name: 'seq', type: 'bigint', primaryKeyConstraintName: 'pk_change_event' })
  seq!: string;

  @Column({ name: 'type', type: 'varchar', length: 32 })
  type!: ChangeEventType;

  @Column({ name: 'at', type: 'timestamptz', default: () => 'now()' })
  at!: Date;

  @Column({ name: 'actor', type: 'varchar', length: 255, nullable: true })
  actor!: string | null;

  /** The changed resource's host: the feed shows an event to the callers who may see that resource. */
  @Column({ name: 'host_id', type: 'varchar', length: 128, nullable: true })
  hostId!: string | null;

  @Column({ name: 'data', type: 'jsonb' })
  data!: Record<string, unknown>;

  /**
   * The host of each tag in `data.tagIds` when the event was written (migration ChangeEventTagHosts): a tag
   * deleted since has no host to judge by, so the feed falls back on this one. Never sent on the wire.
   */
  @Column({ name: 'tag_hosts', type: 'jsonb', nullable: true })
  tagHosts!: Record<string, string | null> | null;
}
