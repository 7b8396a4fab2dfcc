import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { Tag } from './tag.entity.js';

const LinkColumn = (name: string, length: number): PropertyDecorator =>
  PrimaryColumn({ name, type: 'varchar', length, primaryKeyConstraintName: 'pk_entity_tag' });

/**
 * One link between an entity and a tag (table `entity_tag`, DESIGN 5.2). `entityId` names a row of the
 * table of `entityType`; being polymorphic it has no foreign key, so services remove links with the entity.
 * The tag's side has one: deleting a tag removes its links (ON DELETE CASCADE).
 */
@Entity({ name: 'entity_tag' })
@Check('ck_entity_tag_entity_type', `entity_type in ('schema', 'product', 'document')`)
// (tag_id, entity_type, entity_id) INCLUDE (entity_host_id), migration EntityTagHost: TypeORM cannot declare an
// INCLUDE, so it is named here and left to the migration.
@Index('ix_entity_tag_tag', { synchronize: false })
export class EntityTag {
  @LinkColumn('entity_type', 50) entityType!: string;
  @LinkColumn('entity_id', 22) entityId!: string;
  @LinkColumn('tag_id', 22) tagId!: string;

  /** The entity's `host_id`, kept equal to it: link reads decide visibility without the entity table. */
  @Column({ name: 'entity_host_id', type: 'varchar', length: 22, nullable: true })
  entityHostId!: string | null;

  /** The linked tag; never loaded by the repositories, which join `tag` themselves. */
  @ManyToOne(() => Tag, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'tag_id', referencedColumnName: 'tagId', foreignKeyConstraintName: 'fk_entity_tag_tag' })
  tag?: Tag;
}
