import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { EntityLinkRepository, EntityRepository, TagRepository, UnitOfWork, ChangeEventRepository } from '#database';
import { principalOf } from '#token-binding';
import { openDatabase, statusOf } from '../../../test/support/database.js';
import { TagsService } from '../tags/tags.service.js';
import { EntitiesService } from './entities.service.js';
import { ENTITY_TYPES } from './entity-types.js';

let db: DataSource;
let entities: EntitiesService;
let tags: TagsService;
const suffix = Math.random().toString(36).slice(2, 8);
const admin = principalOf({ sub: 'root', scope: 'portal.admin' });
const reader = principalOf({ sub: 'r', scope: 'portal.r', host: `h-${suffix}` });
const schema = ENTITY_TYPES.find((def) => def.entityType === 'schema')!;

beforeAll(async () => {
  db = await openDatabase();
  const work = new UnitOfWork(db);
  tags = new TagsService(new TagRepository(db), work, new ChangeEventRepository(db), new EntityLinkRepository(db));
  entities = new EntitiesService(
    work,
    new EntityRepository(db),
    new EntityLinkRepository(db),
    new TagRepository(db),
    new ChangeEventRepository(db),
  );
});
afterAll(() => db.destroy());

const countOf = async (sql: string, params: unknown[]): Promise<number> =>
  (await db.query<{ n: number }[]>(sql, params))[0]?.n ?? 0;

describe('EntitiesService rules over the entity and link repositories (real database)', () => {
  it('an unknown tag id is 400 and rolls the whole create back: no row, no link', async () => {
    const known = await tags.create(admin, { tagName: `known-${suffix}` });
    const id = `s1${suffix}`;
    const attempt = entities.create(schema, admin, { schemaId: id, schemaName: 'n', tagIds: [known.tagId, 'nope'] });
    expect(await statusOf(attempt)).toBe(400);
    expect(await countOf('select count(*)::int as n from schema where schema_id = $1', [id])).toBe(0);
    expect(await countOf('select count(*)::int as n from entity_tag where entity_id = $1', [id])).toBe(0);
  });

  it('a duplicate id is 409 from the primary key, and the first entity keeps its links', async () => {
    const tag = await tags.create(admin, { tagName: `first-${suffix}` });
    const id = `s2${suffix}`;
    await entities.create(schema, admin, { schemaId: id, schemaName: 'first', tagIds: [tag.tagId] });
    expect(await statusOf(entities.create(schema, admin, { schemaId: id, schemaName: 'second', tagIds: [] }))).toBe(
      409,
    );
    expect((await entities.get(schema, admin, id)).tagIds).toEqual([tag.tagId]);
  });

  it('delete removes the links with the entity in one transaction', async () => {
    const tag = await tags.create(admin, { tagName: `gone-${suffix}` });
    const id = `s3${suffix}`;
    await entities.create(schema, admin, { schemaId: id, schemaName: 'x', tagIds: [tag.tagId] });
    await entities.delete(schema, admin, id, undefined);
    expect(await countOf('select count(*)::int as n from entity_tag where entity_id = $1', [id])).toBe(0);
  });

  it("a reader without portal.w cannot see another host's entity, and tags it cannot see are left out", async () => {
    const hidden = await tags.create(admin, { tagName: `hidden-${suffix}`, hostId: 'elsewhere' });
    const id = `s4${suffix}`;
    await entities.create(schema, admin, { schemaId: id, schemaName: 'x', tagIds: [] });
    // Linked as before link writes checked the entity's host (a global entity sees global tags only).
    await db.query(
      `insert into entity_tag (entity_type, entity_id, entity_host_id, tag_id) values ('schema', $1, null, $2)`,
      [id, hidden.tagId],
    );
    expect((await entities.get(schema, admin, id)).tagIds).toEqual([hidden.tagId]);
    expect((await entities.get(schema, reader, id)).tagIds).toEqual([]);
    const foreign = `s5${suffix}`;
    await entities.create(schema, admin, { schemaId: foreign, schemaName: 'y', hostId: 'elsewhere', tagIds: [] });
    expect(await statusOf(entities.get(schema, reader, foreign))).toBe(404);
  });
});

describe('schema of entity_tag', () => {
  it('entity_type holds 50 characters (migration WidenEntityType)', async () => {
    const [column] = await db.query<{ length: number }[]>(
      `select character_maximum_length as length from information_schema.columns
        where table_name = 'entity_tag' and column_name = 'entity_type'`,
    );
    expect(column?.length).toBe(50);
  });
});
