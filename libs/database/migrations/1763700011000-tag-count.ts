import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';

/**
 * Exact tag totals per host without counting rows (DESIGN 4.2 wants exact totals): `tag_count` holds one
 * counter per host (`''` for global tags) and shard, kept by statement-level triggers in the writing
 * transaction, so any snapshot sees counters and rows agree. The shard is the writing backend's pid
 * modulo 64: concurrent writers of one host update different rows instead of queueing on one.
 */
export class TagCount1763700011000 implements MigrationInterface {
  name = 'TagCount1763700011000';
  // Expand-then-contract (docs/CONTRIBUTING.md): only adds; the previous release keeps working.
  readonly step: MigrationStep = 'expand';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`
      create table tag_count (
        host_key varchar(22) not null,
        shard    smallint    not null,
        tags     bigint      not null,
        constraint pk_tag_count primary key (host_key, shard)
      )`);
    // Writers wait until the triggers exist and the counters are filled, so the first counts are exact.
    await db.query(`lock table tag in share row exclusive mode`);
    // One function for inserts (+1) and deletes (-1): both triggers name their transition table `changed`.
    // Rows in one statement are counted in host order, so two statements never take counters in opposite orders.
    await db.query(`
      create function tag_count_apply() returns trigger language plpgsql as $$
      begin
        insert into tag_count as c (host_key, shard, tags)
          select coalesce(host_id, ''), pg_backend_pid() % 64, count(*) * tg_argv[0]::int from changed group by 1 order by 1
          on conflict on constraint pk_tag_count do update set tags = c.tags + excluded.tags;
        return null;
      end $$`);
    // Row-level: a statement trigger cannot name columns, and most updates leave host_id alone.
    await db.query(`
      create function tag_count_moved() returns trigger language plpgsql as $$
      begin
        insert into tag_count as c (host_key, shard, tags)
          select host_key, pg_backend_pid() % 64, delta
            from (values (coalesce(old.host_id, ''), -1), (coalesce(new.host_id, ''), 1)) moves (host_key, delta)
            order by host_key
          on conflict on constraint pk_tag_count do update set tags = c.tags + excluded.tags;
        return null;
      end $$`);
    await db.query(`create function tag_count_cleared() returns trigger language plpgsql as $$
      begin
        delete from tag_count;
        return null;
      end $$`);
    await db.query(`create trigger tr_tag_count_insert after insert on tag referencing new table as changed
      for each statement execute function tag_count_apply('1')`);
    await db.query(`create trigger tr_tag_count_delete after delete on tag referencing old table as changed
      for each statement execute function tag_count_apply('-1')`);
    await db.query(`create trigger tr_tag_count_update after update of host_id on tag for each row
      when (old.host_id is distinct from new.host_id) execute function tag_count_moved()`);
    await db.query(`create trigger tr_tag_count_truncate after truncate on tag
      for each statement execute function tag_count_cleared()`);
    await db.query(`insert into tag_count (host_key, shard, tags)
      select coalesce(host_id, ''), 0, count(*) from tag group by 1`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop trigger tr_tag_count_truncate on tag`);
    await db.query(`drop trigger tr_tag_count_update on tag`);
    await db.query(`drop trigger tr_tag_count_delete on tag`);
    await db.query(`drop trigger tr_tag_count_insert on tag`);
    await db.query(`drop function tag_count_cleared, tag_count_moved, tag_count_apply`);
    await db.query(`drop table tag_count`);
  }
}
