import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';

/**
 * The change feed's outbox (DESIGN 12): one row per change, written in the transaction of the change.
 * `seq` comes from a sequence taken under a shared advisory lock; a reader's horizon is read under the
 * exclusive one (ChangeEventRepository), so no reader passes a number that may still commit.
 */
export class CreateChangeEvent1763700007000 implements MigrationInterface {
  name = 'CreateChangeEvent1763700007000';
  // Expand-then-contract (docs/CONTRIBUTING.md): only adds; the previous release keeps working.
  readonly step: MigrationStep = 'expand';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`create sequence change_event_seq as bigint`);
    await db.query(`
      create table change_event (
        seq     bigint       not null,
        type    varchar(32)  not null,
        at      timestamptz  not null default now(),
        actor   varchar(255) null,
        host_id varchar(22)  null,
        data    jsonb        not null,
        constraint pk_change_event primary key (seq),
        constraint ck_change_event_type check (type in ('tag.created', 'tag.updated', 'tag.deleted',
          'entity.created', 'entity.updated', 'entity.deleted', 'entity.tagged', 'entity.untagged')),
        constraint ck_change_event_data check (jsonb_typeof(data) = 'object')
      )`);
    await db.query(`alter sequence change_event_seq owned by change_event.seq`);
    // Pruning by age.
    await db.query(`create index ix_change_event_at on change_event (at)`);
    // The highest seq pruned so far: an `after` below it may have missed events (410).
    await db.query(`
      create table change_event_pruned (
        id             boolean not null default true,
        pruned_through bigint  not null default 0,
        constraint pk_change_event_pruned primary key (id),
        constraint ck_change_event_pruned_single check (id)
      )`);
    await db.query(`insert into change_event_pruned (id, pruned_through) values (true, 0)`);
    // One notification per writing transaction, delivered at commit: long-polling readers look again.
    await db.query(`
      create function notify_change_event() returns trigger language plpgsql as $$
      begin
        perform pg_notify('bindery_events', '');
        return null;
      end $$`);
    await db.query(`
      create trigger tr_change_event_notify after insert on change_event
      for each statement execute function notify_change_event()`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop trigger tr_change_event_notify on change_event`);
    await db.query(`drop function notify_change_event()`);
    await db.query(`drop table change_event_pruned`);
    await db.query(`drop table change_event`);
  }
}
