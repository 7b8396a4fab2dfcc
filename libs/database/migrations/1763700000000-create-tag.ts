import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';

export class CreateTag1763700000000 implements MigrationInterface {
  name = 'CreateTag1763700000000';
  // Expand-then-contract (docs/CONTRIBUTING.md): only adds; the previous release keeps working.
  readonly step: MigrationStep = 'expand';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      create table tag (
        tag_id            varchar(22)   not null,
        host_id           varchar(22)   null,
        tag_name          varchar(100)  not null,
        tag_desc          varchar(1024) null,
        update_user       varchar(255)  null,
        update_ts         timestamptz   not null default now(),
        aggregate_version integer       not null default 1,
        constraint pk_tag primary key (tag_id),
        constraint ck_tag_id_format check (tag_id ~ '^[A-Za-z0-9_-]{1,22}$'),
        constraint ck_tag_name_length check (char_length(tag_name) between 1 and 100)
      )`);
    // Names are unique case-insensitively (DESIGN 4.1); this index is the only guard, so races end in 23505.
    await db.query(`create unique index uq_tag_name_lower on tag (lower(tag_name))`);
    await db.query(`create index ix_tag_host_id on tag (host_id)`);
    await db.query(`create index ix_tag_update_ts on tag (update_ts)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop table tag`);
  }
}
