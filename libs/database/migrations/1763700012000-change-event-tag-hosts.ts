import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';

/**
 * Each event carrying `tagIds` also stores, beside its public `data`, the host of each of those tags when it
 * was written (`{ "<tagId>": "<hostId>" | null }`, DESIGN 12). The feed shows a reader only the tag ids it
 * can see, judged by the tag's current host; a tag deleted since has none, so its host at the time decides.
 */
export class ChangeEventTagHosts1763700012000 implements MigrationInterface {
  name = 'ChangeEventTagHosts1763700012000';
  // Expand-then-contract (docs/CONTRIBUTING.md): only adds; the previous release keeps working.
  readonly step: MigrationStep = 'expand';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      alter table change_event add column tag_hosts jsonb null,
        add constraint ck_change_event_tag_hosts check (tag_hosts is null or jsonb_typeof(tag_hosts) = 'object')`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`alter table change_event drop constraint ck_change_event_tag_hosts, drop column tag_hosts`);
  }
}
