import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type SelectQueryBuilder } from 'typeorm';
import { Tag } from '../entities/tag.entity.js';
import type { WriteStatement } from './change-event.repository.js';
import {
  BaseRepository,
  bind,
  bindHost,
  duplicateKeyOf,
  hostCondition,
  visibilityCondition,
  whereVisible,
  type HostVisibility,
} from '../repository.js';
import { withTieBreaker, type Keyset, type KeyColumn, type KeysetPage, type PageWindow } from '../keyset.js';
import type { SortOrder } from '../sort-order.js';

export const TAG_SORT_KEYS = ['tagName', 'tagDesc', 'updateTs', 'tagId'] as const;
export type TagSortKey = (typeof TAG_SORT_KEYS)[number];

// Names sort case-insensitively (DESIGN 4.2); `uq_tag_name_lower` serves the default order.
const SORT_COLUMNS: Record<TagSortKey, Omit<KeyColumn, 'descending'>> = {
  tagName: { sql: 'lower(t.tag_name)', type: 'text' },
  tagDesc: { sql: 'lower(t.tag_desc)', type: 'text', nullable: true },
  updateTs: { sql: 't.update_ts', type: 'timestamp' },
  tagId: { sql: 't.tag_id', type: 'text' },
};

export interface TagFilter {
  readonly visibility: HostVisibility;
  /** Substring patterns, already escaped for LIKE. */
  readonly tagName?: string;
  readonly tagDesc?: string;
  readonly q?: string;
  readonly hostId?: string;
}

// Reads by id, lists and creates are the hot paths (bench/ auth, peer): one statement each, without
// TypeORM's query building and hydration.
const TAG_COLUMNS = 't.tag_id, t.host_id, t.tag_name, t.tag_desc, t.update_user, t.update_ts, t.aggregate_version';
const SELECT_TAG = `select ${TAG_COLUMNS} from tag t where t.tag_id = $1`;

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

function tagParameters(tag: Tag): unknown[] {
  // The time as ISO text: pg's own Date conversion (local time and offset) cost 3 µs of a create (bench peer).
  return [
    tag.tagId,
    tag.hostId,
    tag.tagName,
    tag.tagDesc,
    tag.updateUser,
    tag.updateTs.toISOString(),
    tag.aggregateVersion,
  ];
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

/** The tags aggregate. Unique violations surface as `DuplicateKeyError` (`pk_tag`, `uq_tag_name_lower`). */
@Injectable()
export class TagRepository extends BaseRepository {
  constructor(@InjectDataSource() db: DataSource) {
    super(db);
  }

  /** The insert of `tag` as a statement, for a write recorded with its change event in one statement. */
  insertStatement(tag: Tag): WriteStatement {
    return { sql: INSERT_TAG, parameters: tagParameters(tag) };
  }

  /** The tag, or null. */
  async findById(tagId: string): Promise<Tag | null> {
    const rows = await this.rows<TagRow>(SELECT_TAG, [tagId]);
    return rows[0] === undefined ? null : tagOf(rows[0]);
  }

  /**
   * The tag when `visibility` sees it, its row held (FOR UPDATE) until the transaction ends, or null: another
   * host's tag is neither waited for nor held, so naming it cannot make that host's writes wait.
   */
  async lockVisible(tagId: string, visibility: HostVisibility): Promise<Tag | null> {
    const parameters: unknown[] = [tagId];
    const visible = visibilityCondition(visibility, 't.host_id', parameters);
    const rows = await this.rows<TagRow>(`${SELECT_TAG} ${visible} for update`, parameters);
    return rows[0] === undefined ? null : tagOf(rows[0]);
  }

  async update(tag: Tag): Promise<void> {
    try {
      await this.manager.getRepository(Tag).update({ tagId: tag.tagId }, tag);
    } catch (error) {
      throw duplicateKeyOf(error);
    }
  }

  /** Removes the tag; its entity links go with it through the foreign key's ON DELETE CASCADE. */
  async delete(tagId: string): Promise<void> {
    await this.manager.getRepository(Tag).delete({ tagId });
  }

  /** The ORDER BY of a tag list sorted by `sort`, the tag id breaking ties (so paging is stable). */
  keyset(sort: readonly SortOrder<TagSortKey>[]): Keyset {
    const columns = sort.map(({ key, descending }) => ({ ...SORT_COLUMNS[key], descending }));
    return withTieBreaker(columns, SORT_COLUMNS.tagId);
  }

  /**
   * One page (one row more, to know whether a match follows) and, when the window counts, the total in the
   * same statement: an uncorrelated subquery, which PostgreSQL evaluates once (an InitPlan) in the same round
   * trip. Only an empty page past the end needs a second. A cursor's page starts after its row (keyset), read
   * as ordered branches when the first sort key is nullable, so each is an index range.
   */
  async page(filter: TagFilter, keyset: Keyset, window: PageWindow): Promise<KeysetPage<Tag>> {
    const { visibility } = filter;
    const parameters: unknown[] = [];
    // The reader's host, bound once and named wherever a condition needs it.
    const host = bindHost(visibility, parameters);
    let filters = '';
    if (filter.tagName !== undefined) filters += ` and t.tag_name ilike ${bind(parameters, filter.tagName)}`;
    if (filter.tagDesc !== undefined) filters += ` and t.tag_desc ilike ${bind(parameters, filter.tagDesc)}`;
    if (filter.hostId !== undefined) filters += ` and t.host_id = ${bind(parameters, filter.hostId)}`;
    if (filter.q !== undefined) {
      const q = bind(parameters, filter.q);
      filters += ` and (t.tag_name ilike ${q} or t.tag_desc ilike ${q})`;
    }
    const visible = `where true ${hostCondition(visibility, 't.host_id', host)}${filters}`;
    const count = (where: string): string => `(select count(*)::int from tag t ${where})`;
    let counting: string;
    if (filters === '') {
      // Unfiltered: the per-host counters the tag triggers keep (migration TagCount), whatever the table's size.
      const keys = visibility.allHosts
        ? ''
        : host === undefined
          ? `where host_key = ''`
          : `where host_key in ('', ${host})`;
      counting = `(select coalesce(sum(tags), 0)::int from tag_count ${keys})`;
    } else if (
      host === undefined ||
      filter.q !== undefined ||
      filter.tagName !== undefined ||
      filter.tagDesc !== undefined
    ) {
      // A substring filter is the trigram index's: counting its matches by host split in two made the planner AND
      // them with every tag of the host (0.57 of 1.06 ms at 1M tags; p99 2.2× the 10k one).
      counting = count(visible);
    } else {
      // Two disjoint counts, each an index condition on ix_tag_host_id, cost what an unfiltered count does;
      // the OR form filters every row (5.0 vs 3.3 ms at 40,000 all-visible tags).
      counting = `${count(`where t.host_id = ${host}${filters}`)} + ${count(`where t.host_id is null${filters}`)}`;
    }
    const countParameters = parameters.slice();
    const after =
      window.after === undefined
        ? keyset.startBranches()
        : keyset.afterBranches(window.after, (v) => bind(parameters, v));
    const total = window.withTotal ? `, ${counting} as total` : '';
    const select = `select ${TAG_COLUMNS}, ${keyset.select()}`;
    // One branch is read in its own order (the same rows' order, an index's way); a union is sorted again.
    const [only] = after.length === 1 ? after : [];
    let from = `from tag t ${visible}${only === undefined ? '' : ` and ${only.where}`}`;
    if (after.length > 1) {
      // Each branch an index range read in order; the outer sort sees at most branches × (offset + limit + 1) rows.
      const reach = bind(parameters, window.offset + window.limit + 1);
      const branches = after.map(
        (b) => `(${select} from tag t ${visible} and ${b.where} order by ${b.orderBy} limit ${reach})`,
      );
      from = `from (${branches.join(' union all ')}) t`;
    }
    const rows = await this.rows<TagRow & { total?: number }>(
      `${after.length > 1 ? 'select t.*' : select}${total} ${from}
       order by ${only?.orderBy ?? keyset.orderBy()} offset ${bind(parameters, window.offset)} limit ${bind(parameters, window.limit + 1)}`,
      parameters,
    );
    const { rows: page, next } = keyset.pageOf(rows, window.limit);
    const tags = page.map(tagOf);
    if (!window.withTotal) return { rows: tags, next };
    if (rows[0] !== undefined) return { rows: tags, total: rows[0].total ?? 0, next };
    if (window.offset === 0 && window.after === undefined) return { rows: [], total: 0 };
    const [counted] = await this.rows<{ total: number }>(`select ${counting} as total`, countParameters);
    return { rows: [], total: counted?.total ?? 0 };
  }

  /**
   * Ids of the tags visible under `visibility` named `names`, case-insensitively. `lower(tag_name) in (lower($1), ...)` is
   * the expression of the unique index `uq_tag_name_lower`, so each name is one index probe.
   */
  byNamesQuery(visibility: HostVisibility, names: readonly string[]): SelectQueryBuilder<Tag> {
    const parameters = Object.fromEntries(names.map((name, i) => [`tagName${i}`, name]));
    const list = names.map((_, i) => `lower(:tagName${i})`).join(', ');
    const query = this.manager
      .getRepository(Tag)
      .createQueryBuilder('t')
      .select('t.tag_id', 'tagId')
      .where(`lower(t.tag_name) in (${list})`, parameters);
    return whereVisible(query, visibility, 't.host_id');
  }

  async idsNamed(visibility: HostVisibility, names: readonly string[]): Promise<string[]> {
    return (await this.byNamesQuery(visibility, names).getRawMany<{ tagId: string }>()).map((t) => t.tagId);
  }

  /** The host of each of `ids` that names a tag (null: a global tag); ids of no tag are left out. */
  async hostsOf(ids: readonly string[]): Promise<Map<string, string | null>> {
    if (ids.length === 0) return new Map();
    const rows = await this.rows<{ tag_id: string; host_id: string | null }>(
      'select tag_id, host_id from tag where tag_id = any($1::varchar[])',
      [ids],
    );
    return new Map(rows.map((row) => [row.tag_id, row.host_id]));
  }

  /**
   * Which of `ids` name tags visible under `visibility`, each with its host; those tags cannot be deleted until the
   * transaction ends (FOR KEY SHARE), so links to them can always be written. Locked in id order, whatever the plan:
   * a writer waiting on one tag holds none that sorts after it.
   */
  async existingHosts(visibility: HostVisibility, ids: readonly string[]): Promise<Map<string, string | null>> {
    const parameters: unknown[] = [ids];
    const visible = visibilityCondition(visibility, 'host_id', parameters);
    const rows = await this.manager.query<{ tag_id: string; host_id: string | null }[]>(
      `select tag_id, host_id from tag where tag_id = any($1::varchar[]) ${visible} order by tag_id for key share`,
      parameters,
    );
    return new Map(rows.map((row) => [row.tag_id, row.host_id]));
  }
}
