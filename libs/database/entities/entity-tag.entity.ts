import { Column, Entity, PrimaryColumn } from 'typeorm';

const LinkColumn = (name: string, length: number): PropertyDecorator =>
  PrimaryColumn({ name, type: 'varchar', length, primaryKeyConstraintName: 'pk_entity_tag' });

/**
 * One link between an entity and a tag (table `entity_tag`, DESIGN 5.2). `entityId` names a row of the
 * table of `entityType`; being polymorphic it has no foreign key, so services remove links with the entity.
 */
@Entity({ name: 'entity_tag' })
export class EntityTag {
  @LinkColumn('entity_type', 50) entityType!: string;
  @LinkColumn('entity_id', 22) entityId!: string;
  @LinkColumn('tag_id', 22) tagId!: string;

  /** The entity's `host_id`, kept equal to it: link reads decide visibility without the entity table. */
  @Column({ name: 'entity_host_id', type: 'varchar', length: 22, nullable: true })
  entityHostId!: string | null;
}
