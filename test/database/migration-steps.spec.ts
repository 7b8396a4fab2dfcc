import { describe, expect, it } from '@jest/globals';
import type { QueryRunner } from 'typeorm';
import { migrations, type SteppedMigration } from '#database';

/**
 * DESIGN 15, docs/CONTRIBUTING.md: migrations are expand-then-contract. Every migration says its step, and
 * an `expand` never removes or renames what running processes of the previous release may still use.
 */
const REMOVES = /\bdrop\s+(table|column|view)\b|\brename\b|\bset\s+not\s+null\b/i;

/** What an expand migration's `up` does that only a contract step may do. */
function expandViolations(migration: SteppedMigration): string[] {
  if (migration.step !== 'expand') return [];
  const source = migration.up.toString();
  return [...source.matchAll(new RegExp(REMOVES.source, 'gi'))].map((m) => m[0].toLowerCase());
}

describe('migrations say their step, and expand steps only add', () => {
  it.each(migrations.map((M) => [new M().name ?? M.name, M] as const))('%s', (_name, Migration) => {
    const migration = new Migration();
    expect(['expand', 'contract']).toContain(migration.step);
    expect(expandViolations(migration)).toEqual([]);
  });

  it('the check is not vacuous: an expand step that drops a column is caught', () => {
    class Planted1999999999999 implements SteppedMigration {
      name = 'Planted1999999999999';
      readonly step = 'expand' as const;
      async up(db: QueryRunner): Promise<void> {
        await db.query(`alter table tag drop column tag_desc`);
      }
      async down(): Promise<void> {}
    }
    expect(expandViolations(new Planted1999999999999())).toEqual(['drop column']);
  });
});
