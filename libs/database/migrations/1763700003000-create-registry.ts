import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';

/** The controller's registry of runtime instances (DESIGN 8). */
export class CreateRegistry1763700003000 implements MigrationInterface {
  name = 'CreateRegistry1763700003000';
  // Expand-then-contract (docs/CONTRIBUTING.md): only adds; the previous release keeps working.
  readonly step: MigrationStep = 'expand';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      create table runtime_instance (
        runtime_instance_id varchar(22)  not null,
        host_id             varchar(255) not null,
        service_id          varchar(255) not null,
        env_tag             varchar(255) null,
        version             varchar(100) null,
        protocol            varchar(5)   null,
        address             varchar(255) null,
        port                integer      null,
        tags                jsonb        not null default '{}'::jsonb,
        status              varchar(16)  not null,
        connected_ts        timestamptz  not null default now(),
        last_seen_ts        timestamptz  not null default now(),
        disconnected_ts     timestamptz  null,
        controller_id       uuid         not null,
        connection_id       uuid         null,
        constraint pk_runtime_instance primary key (runtime_instance_id),
        constraint uq_runtime_instance_identity unique nulls not distinct (host_id, service_id, env_tag, address, port),
        constraint ck_runtime_instance_protocol check (protocol in ('http', 'https', 'ws', 'wss')),
        constraint ck_runtime_instance_port check (port between 1 and 65535),
        constraint ck_runtime_instance_status check (status in ('connected', 'disconnected', 'deregistered')),
        constraint ck_runtime_instance_tags check (jsonb_typeof(tags) = 'object')
      )`);
    // Discovery and the start-up sweep use the identity constraint's index (host_id, service_id, env_tag, ...).
    // Shutdown and the last-seen updates look up the connected instances of one controller process.
    await db.query(
      `create index ix_runtime_instance_connected_controller on runtime_instance (controller_id) where status = 'connected'`,
    );
    // The operators' list filters by service (and status) across hosts.
    await db.query(`create index ix_runtime_instance_service on runtime_instance (service_id, status)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop table runtime_instance`);
  }
}
