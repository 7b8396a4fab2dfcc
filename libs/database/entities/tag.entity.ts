import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A free-form label (table `tag`, migration CreateTag). */
@Entity({ name: 'tag' })
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

  @Column({ name: 'update_ts', type: 'timestamptz' })
  updateTs!: Date;

  @Column({ name: 'aggregate_version', type: 'integer' })
  aggregateVersion!: number;
}
