import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';

/** Client records of the built-in client-credentials issuer (DESIGN 10). */
export class CreateOAuthClient1763700005000 implements MigrationInterface {
  name = 'CreateOAuthClient1763700005000';
  // Expand-then-contract (docs/CONTRIBUTING.md): only adds; the previous release keeps working.
  readonly step: MigrationStep = 'expand';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      create table oauth_client (
        client_id            varchar(100)  not null,
        description          varchar(500)  null,
        host                 varchar(255)  null,
        sid                  varchar(255)  null,
        envs                 text[]        not null default '{}',
        scopes               text[]        not null,
        secret_hash          varchar(200)  not null,
        previous_secret_hash varchar(200)  null,
        previous_secret_until timestamptz  null,
        created_ts           timestamptz   not null default now(),
        update_user          varchar(255)  null,
        update_ts            timestamptz   not null default now(),
        constraint pk_oauth_client primary key (client_id),
        -- A runtime client always carries its identity; only an operator client (portal.admin) may lack it.
        constraint ck_oauth_client_runtime_identity
          check ((host is not null and sid is not null) or 'portal.admin' = any (scopes)),
        constraint ck_oauth_client_previous_secret
          check ((previous_secret_hash is null) = (previous_secret_until is null))
      )`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query('drop table oauth_client');
  }
}
