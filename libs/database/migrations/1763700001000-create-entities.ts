import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';

/** Columns every entity table has after its id and own fields (DESIGN 5.1). */
const AUDIT_COLUMNS = `
  host_id           varchar(22)   null,
  update_user       varchar(255)  null,
  update_ts         timestamptz   not null default now(),
  aggregate_version integer       not null default 1`;

/** Own columns of each entity table; the id column is `<table>_id`. */
const ENTITY_TABLES: Readonly<Record<string, string>> = {
  schema: `
  schema_name    varchar(100)  not null,
  schema_version varchar(50)   null,
  schema_type    varchar(50)   null,
  schema_desc    varchar(1024) null,
  schema_body    text          null,`,
  product: `
  product_name    varchar(100)  not null,
  product_version varchar(50)   null,
  product_desc    varchar(1024) null,`,
  document: `
  title        varchar(200) not null,
  content_type varchar(255) null,
  body         text         null,`,
};

export class CreateEntities1763700001000 implements MigrationInterface {
  name = 'CreateEntities1763700001000';
  // Expand-then-contract (docs/CONTRIBUTING.md): only adds; the previous release keeps working.
  readonly step: MigrationStep = 'expand';

  async up(db: QueryRunner): Promise<void> {
    for (const [table, columns] of Object.entries(ENTITY_TABLES)) {
      await db.query(`
        create table ${table} (
          ${table}_id varchar(22) not null,${columns}${AUDIT_COLUMNS},
          constraint pk_${table} primary key (${table}_id),
          constraint ck_${table}_id_format check (${table}_id ~ '^[A-Za-z0-9_-]{1,22}$')
        )`);
      await db.query(`create index ix_${table}_host_id on ${table} (host_id)`);
    }
    // entity_id is polymorphic (its table depends on entity_type), so it has no foreign key: the
    // service deletes an entity's links in the transaction that deletes the entity.
    await db.query(`
      create table entity_tag (
        entity_id   varchar(22) not null,
        entity_type varchar(16) not null,
        tag_id      varchar(22) not null,
        constraint pk_entity_tag primary key (entity_type, entity_id, tag_id),
        constraint ck_entity_tag_entity_type check (entity_type in ('schema', 'product', 'document')),
        constraint fk_entity_tag_tag foreign key (tag_id) references tag (tag_id) on delete cascade
      )`);
    // The primary key serves lookups by (entity_type, entity_id); this one serves the tag filter and
    // the cascade from tag, as an index-only scan.
    await db.query(`create index ix_entity_tag_tag on entity_tag (tag_id, entity_type, entity_id)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop table entity_tag`);
    for (const table of Object.keys(ENTITY_TABLES).reverse()) await db.query(`drop table ${table}`);
  }
}
