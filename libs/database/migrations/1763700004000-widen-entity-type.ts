import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';

/** `entity_tag.entity_type` holds up to 50 characters, as the upstream portal's seed data does. */
export class WidenEntityType1763700004000 implements MigrationInterface {
  name = 'WidenEntityType1763700004000';
  // Expand-then-contract (docs/CONTRIBUTING.md): only adds; the previous release keeps working.
  readonly step: MigrationStep = 'expand';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`alter table entity_tag alter column entity_type type varchar(50)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`alter table entity_tag alter column entity_type type varchar(16)`);
  }
}
