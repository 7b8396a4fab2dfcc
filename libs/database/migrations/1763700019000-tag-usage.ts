import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';

/**
 * Exact usage counts without counting links (DESIGN 12: `include=usage`, the reverse lookup's `total`):
 * `tag_usage` holds one counter per tag, entity type, entity host (`''` for global entities) and shard, kept by
 * triggers on `entity_tag` in the writing transaction, as `tag_count` is for tags. A tag on a million entities
 * costs a reader what a tag on ten does. The shard is the writing backend's pid modulo 64, so concurrent
 * writers of one popular tag update different rows instead of queueing on one.
 */
export class TagUsage1763700019000 implements MigrationInterface {
  name = 'TagUsage1763700019000';
  // Expand-then-contract (docs/CONTRIBUTING.md): only adds; the previous release's writes are counted too.
  readonly step: MigrationStep = 'expand';

  async up(db: QueryRunner): Promise<void> {
    // No foreign key to tag: a deleted tag's links are counted down after its row is gone (see below).
    await db.query(`
      create table tag_usage (
        tag_id      varchar(22) not null,
        entity_type varchar(16) not null,
        host_key    varchar(22) not null,
        shard       smallint    not null,
        links       bigint      not null,
        constraint pk_tag_usage primary key (tag_id, entity_type, host_key, shard)
      )`);
    // Link writers wait until the triggers exist and the counters are filled, so the first counts are exact.
    await db.query(`lock table entity_tag in share row exclusive mode`);
    // Inserts (+1) and deletes (-1); rows in key order, so two statements never take counters in opposite orders.
    // Links of a tag deleted in this transaction (its cascade) are not counted: its counters are forgotten.
    await db.query(`
      create function tag_usage_apply() returns trigger language plpgsql as $$
      begin
        insert into tag_usage as u (tag_id, entity_type, host_key, shard, links)
          select tag_id, entity_type, coalesce(entity_host_id, ''), pg_backend_pid() % 64, count(*) * tg_argv[0]::int
            from changed where exists (select 1 from tag t where t.tag_id = changed.tag_id)
            group by 1, 2, 3 order by 1, 2, 3
          on conflict on constraint pk_tag_usage do update set links = u.links + excluded.links;
        return null;
      end $$`);
    // Row-level: an entity moving host updates its few links, and most updates of entity_tag change nothing counted.
    await db.query(`
      create function tag_usage_moved() returns trigger language plpgsql as $$
      begin
        insert into tag_usage as u (tag_id, entity_type, host_key, shard, links)
          select tag_id, entity_type, host_key, pg_backend_pid() % 64, sum(delta)
            from (values (old.tag_id, old.entity_type, coalesce(old.entity_host_id, ''), -1),
                         (new.tag_id, new.entity_type, coalesce(new.entity_host_id, ''), 1)) moves (tag_id, entity_type, host_key, delta)
            group by 1, 2, 3 order by 1, 2, 3
          on conflict on constraint pk_tag_usage do update set links = u.links + excluded.links;
        return null;
      end $$`);
    await db.query(`create function tag_usage_cleared() returns trigger language plpgsql as $$
      begin
        delete from tag_usage;
        return null;
      end $$`);
    // A deleted tag's counters go with it; its links' cascade, before or after this, counts nothing (above).
    await db.query(`create function tag_usage_forget() returns trigger language plpgsql as $$
      begin
        delete from tag_usage u using gone where u.tag_id = gone.tag_id;
        return null;
      end $$`);
    await db.query(`create trigger tr_tag_usage_insert after insert on entity_tag referencing new table as changed
      for each statement execute function tag_usage_apply('1')`);
    await db.query(`create trigger tr_tag_usage_delete after delete on entity_tag referencing old table as changed
      for each statement execute function tag_usage_apply('-1')`);
    await db.query(`create trigger tr_tag_usage_update after update on entity_tag for each row
      when (old.entity_host_id is distinct from new.entity_host_id or old.tag_id <> new.tag_id
            or old.entity_type <> new.entity_type)
      execute function tag_usage_moved()`);
    await db.query(`create trigger tr_tag_usage_truncate after truncate on entity_tag
      for each statement execute function tag_usage_cleared()`);
    await db.query(`create trigger tr_tag_usage_forget after delete on tag referencing old table as gone
      for each statement execute function tag_usage_forget()`);
    await db.query(`insert into tag_usage (tag_id, entity_type, host_key, shard, links)
      select tag_id, entity_type, coalesce(entity_host_id, ''), 0, count(*) from entity_tag group by 1, 2, 3`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop trigger tr_tag_usage_forget on tag`);
    await db.query(`drop trigger tr_tag_usage_truncate on entity_tag`);
    await db.query(`drop trigger tr_tag_usage_update on entity_tag`);
    await db.query(`drop trigger tr_tag_usage_delete on entity_tag`);
    await db.query(`drop trigger tr_tag_usage_insert on entity_tag`);
    await db.query(`drop function tag_usage_forget, tag_usage_cleared, tag_usage_moved, tag_usage_apply`);
    await db.query(`drop table tag_usage`);
  }
}
