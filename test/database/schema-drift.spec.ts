import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Column, DataSource, Entity, PrimaryColumn } from 'typeorm';
import { dataSourceOptions } from '#database';
import { openDatabase, testDatabaseOptions } from '../support/database.js';

let db: DataSource;

beforeAll(async () => {
  db = await openDatabase();
});
afterAll(() => db.destroy());

/** What TypeORM's schema builder would run to make the database match the entities (it runs nothing). */
async function pendingChanges(source: DataSource): Promise<string[]> {
  const { upQueries } = await source.driver.createSchemaBuilder().log();
  return upQueries.map((query) => query.query);
}

/** `tag` as it is not: its format check left out and the description required. */
@Entity({ name: 'tag' })
class DriftedTag {
  @PrimaryColumn({ name: 'tag_id', type: 'varchar', length: 22, primaryKeyConstraintName: 'pk_tag' })
  tagId!: string;

  @Column({ name: 'tag_desc', type: 'varchar', length: 1024 })
  tagDesc!: string;
}

describe('TypeORM entities and the migrated schema', () => {
  it('after the migrations, the schema builder has nothing to change: names, columns, keys and checks agree', async () => {
    expect(await pendingChanges(db)).toEqual([]);
  });

  it('the comparison is not vacuous: an entity that drifts from the schema shows up as pending changes', async () => {
    const drifted = new DataSource({
      ...dataSourceOptions({ ...testDatabaseOptions(), poolSize: 1 }),
      entities: [DriftedTag],
    });
    await drifted.initialize();
    try {
      const changes = (await pendingChanges(drifted)).join('\n');
      expect(changes).toContain('DROP CONSTRAINT "ck_tag_id_format"');
      expect(changes).toMatch(/ALTER COLUMN "tag_desc" SET NOT NULL/);
    } finally {
      await drifted.destroy();
    }
  });
});
