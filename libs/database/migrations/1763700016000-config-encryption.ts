import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';

/**
 * Storage for config values encrypted at rest (DESIGN 17): wrapped data keys, the deployment-wide switch
 * for encrypted writes, sealed values beside the plaintext columns (which become nullable), file contents
 * stored once per layer and referred to by the layer and its versions (DESIGN 14). A deployment that
 * already holds values keeps writing plaintext until `keys:encrypt-existing`; an empty one starts encrypted.
 */
export class ConfigEncryption1763700016000 implements MigrationInterface {
  name = 'ConfigEncryption1763700016000';
  // Expand-then-contract (docs/CONTRIBUTING.md): only adds, and relaxes NOT NULL; the previous release keeps working.
  readonly step: MigrationStep = 'expand';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      create table config_data_key (
        data_key_id bigint generated always as identity constraint pk_config_data_key primary key,
        kid varchar(64) not null,
        wrapped bytea not null,
        created_ts timestamptz not null default now()
      )`);
    await db.query(`create index ix_config_data_key_kid on config_data_key (kid)`);
    await db.query(`
      create table config_encryption (
        id boolean not null default true constraint pk_config_encryption primary key,
        encrypted_writes boolean not null,
        constraint ck_config_encryption_single check (id)
      )`);
    await db.query(`
      insert into config_encryption (encrypted_writes)
      select not (exists (select 1 from config_property) or exists (select 1 from config_file)
                  or exists (select 1 from config_layer_version))`);
    await db.query(`
      create table config_file_content (
        content_id bigint generated always as identity constraint pk_config_file_content primary key,
        layer_id bigint not null
          constraint fk_config_file_content_layer references config_layer (layer_id) on delete cascade,
        data_key_id bigint not null constraint fk_config_file_content_data_key references config_data_key (data_key_id),
        sealed bytea not null,
        size integer not null constraint ck_config_file_content_size check (size >= 0)
      )`);
    await db.query(`create index ix_config_file_content_layer on config_file_content (layer_id)`);
    await db.query(`create index ix_config_file_content_data_key on config_file_content (data_key_id)`);
    await db.query(`
      alter table config_property
        alter column property_value drop not null,
        add column sealed bytea,
        add column data_key_id bigint constraint fk_config_property_data_key references config_data_key (data_key_id),
        add constraint ck_config_property_stored check ((property_value is null) <> (sealed is null)
                                                       and (sealed is null) = (data_key_id is null))`);
    await db.query(`create index ix_config_property_data_key on config_property (data_key_id)`);
    await db.query(`
      alter table config_file
        alter column content drop not null,
        add column content_id bigint
          constraint fk_config_file_content references config_file_content (content_id),
        add constraint ck_config_file_stored check ((content is null) <> (content_id is null))`);
    await db.query(`create index ix_config_file_content_id on config_file (content_id)`);
    await db.query(`
      alter table config_layer_version
        alter column properties drop not null,
        alter column files drop not null,
        alter column file_contents drop not null,
        add column data_key_id bigint
          constraint fk_config_layer_version_data_key references config_data_key (data_key_id),
        add column sealed_properties jsonb,
        add column file_refs jsonb,
        add constraint ck_config_layer_version_stored check (
          (properties is null) <> (sealed_properties is null)
          and (sealed_properties is null) = (data_key_id is null)
          and (file_contents is null) <> (file_refs is null)
          and (sealed_properties is null or jsonb_typeof(sealed_properties) = 'object')
          and (file_refs is null or jsonb_typeof(file_refs) = 'object'))`);
    await db.query(`create index ix_config_layer_version_data_key on config_layer_version (data_key_id)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`
      alter table config_layer_version drop constraint ck_config_layer_version_stored,
        drop column file_refs, drop column sealed_properties, drop column data_key_id`);
    await db.query(`alter table config_file drop constraint ck_config_file_stored, drop column content_id`);
    await db.query(`alter table config_property drop constraint ck_config_property_stored, drop column data_key_id,
                    drop column sealed`);
    await db.query(`drop table config_file_content`);
    await db.query(`drop table config_encryption`);
    await db.query(`drop table config_data_key`);
  }
}
