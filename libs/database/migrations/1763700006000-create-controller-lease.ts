import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';

/**
 * Controller replicas (DESIGN 8.1): leases judged by the database's clock, and a notification on every
 * change of a runtime instance that discovery can see, delivered on commit through LISTEN/NOTIFY.
 */
export class CreateControllerLease1763700006000 implements MigrationInterface {
  name = 'CreateControllerLease1763700006000';
  // Expand-then-contract (docs/CONTRIBUTING.md): only adds; the previous release keeps working.
  readonly step: MigrationStep = 'expand';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      create table controller_lease (
        controller_id uuid         not null,
        host_id       varchar(255) not null,
        endpoint      varchar(300) null,
        held_since_ts timestamptz  not null default now(),
        renewed_ts    timestamptz  not null default now(),
        expires_ts    timestamptz  not null,
        constraint pk_controller_lease primary key (controller_id),
        constraint ck_controller_lease_expiry check (expires_ts >= renewed_ts)
      )`);
    // The reaper looks for expired leases.
    await db.query(`create index ix_controller_lease_expires on controller_lease (expires_ts)`);
    await db.query(`create index ix_controller_lease_endpoint on controller_lease (endpoint)`);
    // One channel, payload {"hostId","serviceId"}: listeners re-read that service's nodes (never trust a payload).
    await db.query(`
      create function notify_runtime_instance_changed() returns trigger language plpgsql as $$
      begin
        perform pg_notify('bindery_registry', json_build_object(
          'hostId', coalesce(new.host_id, old.host_id),
          'serviceId', coalesce(new.service_id, old.service_id))::text);
        return null;
      end $$`);
    await db.query(`
      create trigger tr_runtime_instance_changed_insert_delete after insert or delete on runtime_instance
      for each row execute function notify_runtime_instance_changed()`);
    // A liveness touch (last_seen_ts only) changes nothing a watcher sees.
    await db.query(`
      create trigger tr_runtime_instance_changed_update after update on runtime_instance
      for each row when (
        (old.status, old.connection_id, old.version, old.protocol, old.address, old.port, old.tags, old.env_tag,
         old.connected_ts)
        is distinct from
        (new.status, new.connection_id, new.version, new.protocol, new.address, new.port, new.tags, new.env_tag,
         new.connected_ts))
      execute function notify_runtime_instance_changed()`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop trigger tr_runtime_instance_changed_update on runtime_instance`);
    await db.query(`drop trigger tr_runtime_instance_changed_insert_delete on runtime_instance`);
    await db.query(`drop function notify_runtime_instance_changed()`);
    await db.query(`drop table controller_lease`);
  }
}
