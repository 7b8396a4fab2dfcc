import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { ChangeEventRepository, EntityLinkRepository, TagRepository, UnitOfWork } from '#database';
import { principalOf } from '#token-binding';
import { openDatabase, statusOf } from '../../../test/support/database.js';
import { TagsService } from './tags.service.js';

let db: DataSource;
let service: TagsService;
const suffix = Math.random().toString(36).slice(2, 8);
const admin = principalOf({ sub: 'root', scope: 'portal.admin' });
const hostA = principalOf({ sub: 'a', scope: 'portal.w', host: `a-${suffix}` });
const hostB = principalOf({ sub: 'b', scope: 'portal.w', host: `b-${suffix}` });

beforeAll(async () => {
  db = await openDatabase();
  service = new TagsService(
    new TagRepository(db),
    new UnitOfWork(db),
    new ChangeEventRepository(db),
    new EntityLinkRepository(db),
  );
});
afterAll(() => db.destroy());

const rowsNamed = async (name: string): Promise<number> =>
  (await db.query<{ n: number }[]>('select count(*)::int as n from tag where lower(tag_name) = lower($1)', [name]))[0]
    ?.n ?? 0;

describe('TagsService rules over TagRepository (real database)', () => {
  it('a duplicate name in another case is 409 from the unique index, and one row stays', async () => {
    const name = `Dup-${suffix}`;
    await service.create(admin, { tagName: name });
    expect(await statusOf(service.create(admin, { tagName: name.toLowerCase() }))).toBe(409);
    expect(await rowsNamed(name)).toBe(1);
  });

  it("writing another host's tag is 403 and stores nothing", async () => {
    const name = `foreign-${suffix}`;
    expect(await statusOf(service.create(hostA, { tagName: name, hostId: hostB.host }))).toBe(403);
    expect(await rowsNamed(name)).toBe(0);
  });

  it("another host's tag reads as 404; the owner and admins see it", async () => {
    const created = await service.create(hostA, { tagName: `own-${suffix}`, hostId: hostA.host });
    expect(await statusOf(service.get(hostB, created.tagId))).toBe(404);
    expect((await service.get(hostA, created.tagId)).tagId).toBe(created.tagId);
    expect((await service.get(admin, created.tagId)).tagId).toBe(created.tagId);
  });

  it('a stale If-Match is 412 and leaves the row at its version', async () => {
    const created = await service.create(admin, { tagName: `versioned-${suffix}` });
    const stale = service.update(admin, created.tagId, { tagName: `renamed-${suffix}` }, { versions: [7] });
    expect(await statusOf(stale)).toBe(412);
    const [row] = await db.query<{ v: number; name: string }[]>(
      'select aggregate_version as v, tag_name as name from tag where tag_id = $1',
      [created.tagId],
    );
    expect(row).toEqual({ v: 1, name: `versioned-${suffix}` });
    const updated = await service.update(admin, created.tagId, { tagName: `renamed-${suffix}` }, { versions: [1] });
    expect(updated.aggregateVersion).toBe(2);
  });

  it('a rename onto an existing name is 409 inside the transaction, and the row is unchanged', async () => {
    await service.create(admin, { tagName: `taken-${suffix}` });
    const other = await service.create(admin, { tagName: `free-${suffix}` });
    expect(await statusOf(service.update(admin, other.tagId, { tagName: `TAKEN-${suffix}` }, undefined))).toBe(409);
    expect((await service.get(admin, other.tagId)).tagName).toBe(`free-${suffix}`);
  });
});
