import type { MigrationInterface, QueryRunner } from 'typeorm';

/** `entity_tag.entity_type` holds up to 50 characters, as the upstream portal's seed data does. */
export class WidenEntityType1763700004000 implements MigrationInterface {
  name = 'WidenEntityType1763700004000';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`alter table entity_tag alter column entity_type type varchar(50)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`alter table entity_tag alter column entity_type type varchar(16)`);
  }
}
