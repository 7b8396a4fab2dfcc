import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';

/**
 * Config server storage (DESIGN 7). A layer is one address: host, then a service or a product version,
 * then an optional environment; its properties and its cert/file contents hang off it. Absent address
 * parts are NULL, and `nulls not distinct` (PostgreSQL 15+) keeps one row per address anyway.
 */
export class CreateConfig1763700002000 implements MigrationInterface {
  name = 'CreateConfig1763700002000';
  // Expand-then-contract (docs/CONTRIBUTING.md): only adds; the previous release keeps working.
  readonly step: MigrationStep = 'expand';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      create table config_layer (
        layer_id        bigint generated always as identity,
        host            varchar(128) not null,
        service_id      varchar(128) null,
        product_id      varchar(128) null,
        product_version varchar(64)  null,
        env_tag         varchar(64)  null,
        update_user     varchar(255) null,
        update_ts       timestamptz  not null default now(),
        constraint pk_config_layer primary key (layer_id),
        constraint uq_config_layer_address
          unique nulls not distinct (host, service_id, product_id, product_version, env_tag),
        constraint ck_config_layer_owner check ((service_id is null) <> (product_id is null)),
        constraint ck_config_layer_product check ((product_id is null) = (product_version is null)),
        constraint ck_config_layer_trimmed check (
          host ~ '^\\S(.*\\S)?$'
          and (service_id is null or service_id ~ '^\\S(.*\\S)?$')
          and (product_id is null or product_id ~ '^\\S(.*\\S)?$')
          and (product_version is null or product_version ~ '^\\S(.*\\S)?$')
          and (env_tag is null or env_tag ~ '^\\S(.*\\S)?$'))
      )`);
    // Service layers are found through the unique index (host, service_id, ...); product layers here.
    await db.query(`
      create index ix_config_layer_product on config_layer (host, product_id, product_version, env_tag)
        where product_id is not null`);

    // Values are jsonb so a property keeps its type (string, number, boolean, list, map) end to end.
    await db.query(`
      create table config_property (
        layer_id       bigint       not null,
        property_key   varchar(255) not null,
        property_value jsonb        not null,
        constraint pk_config_property primary key (layer_id, property_key),
        constraint fk_config_property_layer foreign key (layer_id)
          references config_layer (layer_id) on delete cascade,
        constraint ck_config_property_key
          check (property_key ~ '^[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)*$'),
        constraint ck_config_property_value check (jsonb_typeof(property_value) <> 'null')
      )`);

    await db.query(`
      create table config_file (
        layer_id  bigint       not null,
        kind      varchar(4)   not null,
        file_name varchar(255) not null,
        content   bytea        not null,
        constraint pk_config_file primary key (layer_id, kind, file_name),
        constraint fk_config_file_layer foreign key (layer_id)
          references config_layer (layer_id) on delete cascade,
        constraint ck_config_file_kind check (kind in ('cert', 'file')),
        constraint ck_config_file_name check (file_name ~ '^[A-Za-z0-9_][A-Za-z0-9._-]*$')
      )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop table config_file`);
    await db.query(`drop table config_property`);
    await db.query(`drop table config_layer`);
  }
}
