import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { uniqueViolation } from '#database';
import { badRequest, conflict, notFound, preconditionFailed, newId, likePattern, parseSort } from '#platform';
import type { Principal } from '#token-binding';
import { versionMatches, type VersionCondition } from '../common/etag.js';
import { assertCanWrite, canSee, whereVisible } from '../common/host-access.js';
import type { ListTagsQuery } from './dto/list-tags.query.js';
import type { TagBodyDto } from './dto/tag-body.dto.js';
import { Tag } from './tag.entity.js';
import { toTagView, type TagPage, type TagView } from './tag.view.js';

const SORT_COLUMNS = {
  tagName: 'lower(t.tag_name)',
  tagDesc: 'lower(t.tag_desc)',
  updateTs: 't.update_ts',
  tagId: 't.tag_id',
} as const;
type SortKey = keyof typeof SORT_COLUMNS;
const SORT_KEYS = Object.keys(SORT_COLUMNS) as SortKey[];

// Reads by id and creates are the hot paths (bench/ auth, peer): one statement each, without TypeORM's
// query building and hydration.
const SELECT_TAG =
  'select tag_id, host_id, tag_name, tag_desc, update_user, update_ts, aggregate_version from tag where tag_id = $1';

const INSERT_TAG =
  'insert into tag (tag_id, host_id, tag_name, tag_desc, update_user, update_ts, aggregate_version) values ($1, $2, $3, $4, $5, $6, $7)';

interface TagRow {
  readonly tag_id: string;
  readonly host_id: string | null;
  readonly tag_name: string;
  readonly tag_desc: string | null;
  readonly update_user: string | null;
  readonly update_ts: Date;
  readonly aggregate_version: number;
}

function tagOf(row: TagRow): Tag {
  return Object.assign(new Tag(), {
    tagId: row.tag_id,
    hostId: row.host_id,
    tagName: row.tag_name,
    tagDesc: row.tag_desc,
    updateUser: row.update_user,
    updateTs: row.update_ts,
    aggregateVersion: row.aggregate_version,
  });
}

/** Maps a unique violation to 409; the database's unique indexes are the only duplicate check. */
function duplicateTag(error: unknown, body: { tagId: string; tagName: string }): unknown {
  const constraint = uniqueViolation(error);
  if (constraint === 'pk_tag') return conflict(`A tag with tagId ${body.tagId} already exists`);
  if (constraint === 'uq_tag_name_lower') return conflict(`A tag named "${body.tagName}" already exists`);
  return error;
}

@Injectable()
export class TagsService {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async create(principal: Principal, body: TagBodyDto): Promise<TagView> {
    const hostId = body.hostId ?? null;
    assertCanWrite(principal, hostId, 'tag');
    const tag = this.db.getRepository(Tag).create({
      tagId: body.tagId ?? newId(),
      hostId,
      tagName: body.tagName,
      tagDesc: body.tagDesc ?? null,
      updateUser: principal.subject,
      updateTs: new Date(),
      aggregateVersion: 1,
    });
    try {
      await this.db.query(INSERT_TAG, [
        tag.tagId,
        tag.hostId,
        tag.tagName,
        tag.tagDesc,
        tag.updateUser,
        tag.updateTs,
        tag.aggregateVersion,
      ]);
    } catch (error) {
      throw duplicateTag(error, tag);
    }
    return toTagView(tag);
  }

  async list(principal: Principal, query: ListTagsQuery): Promise<TagPage> {
    const sort = parseSort(query.sort, SORT_KEYS, 'tagName');
    const select = whereVisible(this.db.getRepository(Tag).createQueryBuilder('t'), principal, 't.host_id');
    if (query.tagName !== undefined)
      select.andWhere('t.tag_name ilike :tagName', { tagName: likePattern(query.tagName) });
    if (query.tagDesc !== undefined)
      select.andWhere('t.tag_desc ilike :tagDesc', { tagDesc: likePattern(query.tagDesc) });
    if (query.hostId !== undefined) select.andWhere('t.host_id = :hostId', { hostId: query.hostId });
    if (query.q !== undefined)
      select.andWhere('(t.tag_name ilike :q or t.tag_desc ilike :q)', { q: likePattern(query.q) });
    // count(*) rather than getManyAndCount's count(distinct tag_id); both statements run at once.
    const count = select.clone().select('count(*)::int', 'total');
    for (const { key, descending } of sort) select.addOrderBy(SORT_COLUMNS[key], descending ? 'DESC' : 'ASC');
    // The id breaks ties so paging is stable even when sort keys repeat.
    if (!sort.some((s) => s.key === 'tagId')) select.addOrderBy('t.tag_id', 'ASC');
    const [tags, counted] = await Promise.all([
      select.offset(query.offset).limit(query.limit).getMany(),
      count.getRawOne<{ total: number }>(),
    ]);
    return { total: counted?.total ?? 0, tags: tags.map(toTagView) };
  }

  async get(principal: Principal, tagId: string): Promise<TagView> {
    return toTagView(await this.findVisible(this.db.manager, principal, tagId));
  }

  async update(principal: Principal, tagId: string, body: TagBodyDto, condition: VersionCondition): Promise<TagView> {
    if (body.tagId !== undefined && body.tagId !== tagId) {
      throw badRequest('tagId in the body must equal the tagId in the path', [
        { field: 'tagId', message: 'must equal the path' },
      ]);
    }
    const hostId = body.hostId ?? null;
    return this.db.transaction(async (tx) => {
      const current = await this.lockWritable(tx, principal, tagId, condition);
      assertCanWrite(principal, hostId, 'tag');
      const next = tx.getRepository(Tag).merge(current, {
        hostId,
        tagName: body.tagName,
        tagDesc: body.tagDesc ?? null,
        updateUser: principal.subject,
        updateTs: new Date(),
        aggregateVersion: current.aggregateVersion + 1,
      });
      try {
        await tx.getRepository(Tag).update({ tagId }, next);
      } catch (error) {
        throw duplicateTag(error, next);
      }
      return toTagView(next);
    });
  }

  /** Removes the tag; its entity links go with it through the foreign key's ON DELETE CASCADE. */
  async delete(principal: Principal, tagId: string, condition: VersionCondition): Promise<void> {
    await this.db.transaction(async (tx) => {
      await this.lockWritable(tx, principal, tagId, condition);
      await tx.getRepository(Tag).delete({ tagId });
    });
  }

  private async findVisible(manager: EntityManager, principal: Principal, tagId: string, lock = false): Promise<Tag> {
    const rows = await manager.query<TagRow[]>(lock ? `${SELECT_TAG} for update` : SELECT_TAG, [tagId]);
    const tag = rows[0] === undefined ? null : tagOf(rows[0]);
    // Another host's tag is answered exactly like a missing one (DESIGN 4.3).
    if (tag === null || !canSee(principal, tag.hostId)) throw notFound(`No tag with tagId ${tagId}`);
    return tag;
  }

  /** Locks the row for this transaction after checking visibility, write access and `If-Match`. */
  private async lockWritable(
    tx: EntityManager,
    principal: Principal,
    tagId: string,
    condition: VersionCondition,
  ): Promise<Tag> {
    const tag = await this.findVisible(tx, principal, tagId, true);
    assertCanWrite(principal, tag.hostId, 'tag');
    if (!versionMatches(condition, tag.aggregateVersion)) {
      throw preconditionFailed(`tag ${tagId} is at version ${tag.aggregateVersion}, not the one in If-Match`);
    }
    return tag;
  }
}
