import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** A free-form label (table `tag`, migration CreateTag). */
@Entity({ name: 'tag' })
// Names are unique case-insensitively: a unique index on lower(tag_name). TypeORM cannot declare an expression
// index, so it is named here and left to the migration.
@Index('uq_tag_name_lower', { synchronize: false })
// Substring search's trigram indexes (GIN, gin_trgm_ops; migration TagTrigram, absent where pg_trgm is).
@Index('ix_tag_name_trgm', { synchronize: false })
@Index('ix_tag_desc_trgm', { synchronize: false })
// The order of sort=tagDesc (lower(tag_desc), tag_id; migration TagDescOrder), an expression index too.
@Index('ix_tag_desc_keyset', { synchronize: false })
@Check('ck_tag_id_format', `tag_id ~ '^[A-Za-z0-9_-]{1,22}$'`)
@Check('ck_tag_name_length', 'char_length(tag_name) between 1 and 100')
@Index('ix_tag_host_id', ['hostId'])
@Index('ix_tag_update_ts', ['updateTs'])
export class Tag {
  @PrimaryColumn({ name: 'tag_id', type: 'varchar', length: 22, primaryKeyConstraintName: 'pk_tag' })
  tagId!: string;

  @Column({ name: 'host_id', type: 'varchar', length: 22, nullable: true })
  hostId!: string | null;

  @Column({ name: 'tag_name', type: 'varchar', length: 100 })
  tagName!: string;

  @Column({ name: 'tag_desc', type: 'varchar', length: 1024, nullable: true })
  tagDesc!: string | null;

  @Column({ name: 'update_user', type: 'varchar', length: 255, nullable: true })
  updateUser!: string | null;

  @Column({ name: 'update_ts', type: 'timestamptz', default: () => 'now()' })
  updateTs!: Date;

  @Column({ name: 'aggregate_version', type: 'integer', default: 1 })
  aggregateVersion!: number;
}
