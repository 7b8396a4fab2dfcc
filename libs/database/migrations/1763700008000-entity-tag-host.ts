import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';

/** The entity tables, each with its id column. */
const ENTITY_TABLES = ['schema', 'product', 'document'] as const;

/**
 * Each link carries its entity's host (DESIGN 12): usage counts and the reverse lookup decide visibility
 * from ix_entity_tag_tag alone, instead of probing (or hashing) the entity tables per link. The service
 * keeps it equal to the entity's `host_id` in the transaction that changes either.
 */
export class EntityTagHost1763700008000 implements MigrationInterface {
  name = 'EntityTagHost1763700008000';
  // Expand-then-contract (docs/CONTRIBUTING.md): only adds; the previous release keeps working.
  readonly step: MigrationStep = 'expand';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`alter table entity_tag add column entity_host_id varchar(22) null`);
    for (const table of ENTITY_TABLES) {
      await db.query(`
        update entity_tag et set entity_host_id = e.host_id
        from ${table} e where et.entity_type = '${table}' and e.${table}_id = et.entity_id`);
    }
    await db.query(`drop index ix_entity_tag_tag`);
    await db.query(
      `create index ix_entity_tag_tag on entity_tag (tag_id, entity_type, entity_id) include (entity_host_id)`,
    );
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop index ix_entity_tag_tag`);
    await db.query(`create index ix_entity_tag_tag on entity_tag (tag_id, entity_type, entity_id)`);
    await db.query(`alter table entity_tag drop column entity_host_id`);
  }
}
