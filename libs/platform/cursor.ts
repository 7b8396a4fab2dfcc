import { createHash } from 'node:crypto';
import { badRequest } from './problem.js';

/**
 * The cursors of keyset paging (DESIGN 4.2): base64url of `{"v":1,"l":list,"d":digest,"k":[values]}`, where
 * `d` digests the filter and sort the pages are made for and `k` holds the last row's sort values and id.
 * Opaque to clients; a cursor is judged only by its shape and what it is bound to, never trusted to be ours.
 */

/** One sort value of a cursor (text, a number, or null); the list's repository says which it expects. */
export type CursorValue = string | number | null;

/** What a cursor is bound to: the list, and everything that decides its matches and their order. */
export interface CursorScope {
  /** The list's name, e.g. `tags`, `schemas`, `tag-entities`. */
  readonly list: string;
  /** The filter and sort as the service applies them (JSON; the same request gives the same value). */
  readonly filter: unknown;
}

/** Where a page starts, how long it is and whether it counts every match (`total`). */
export interface PageWindow {
  readonly offset: number;
  /** The sort values and id of the row the page follows (a cursor's), or undefined: from `offset`. */
  readonly after?: readonly CursorValue[] | undefined;
  readonly limit: number;
  readonly withTotal: boolean;
}

/** The paging part of a list query (`PageQueryDto`). */
export interface PageQuery {
  readonly offset?: number;
  readonly limit: number;
  readonly cursor?: string;
  readonly total?: boolean;
}

/** Longest cursor accepted: the URL limit (8192) bounds it anyway; the longest real one is about 6 KiB. */
export const MAX_CURSOR_LENGTH = 8000;
export const CURSOR_PATTERN = /^[A-Za-z0-9_-]+$/;

const VERSION = 1;

function digestOf(scope: CursorScope): string {
  return createHash('sha256')
    .update(JSON.stringify([scope.list, scope.filter]))
    .digest('base64url')
    .slice(0, 22);
}

/** A refusal of `cursor` naming only the field, never the value (DESIGN 3: no echo of the query). */
const refused = (message: string) =>
  badRequest(`cursor ${message}`, [{ field: 'cursor', message: `cursor ${message}` }]);

/** The cursor of the page after the row whose sort values and id are `keys` (undefined: no match follows). */
export function encodeCursor(scope: CursorScope, keys: readonly CursorValue[] | undefined): string | undefined {
  if (keys === undefined) return undefined;
  const body = { v: VERSION, l: scope.list, d: digestOf(scope), k: keys };
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

function isCursorValue(value: unknown): value is CursorValue {
  return value === null || typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

/** The JSON of a canonical base64url text, or undefined when it is none. */
function parsed(raw: string): unknown {
  if (raw.length > MAX_CURSOR_LENGTH || !CURSOR_PATTERN.test(raw)) return undefined;
  const bytes = Buffer.from(raw, 'base64url');
  // Node decodes leniently: only the canonical spelling of the bytes is one of ours.
  if (bytes.toString('base64url') !== raw) return undefined;
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return undefined;
  }
}

/**
 * The sort values a cursor made for `scope` carries, once `accepts` (the list's keyset) finds them of the
 * right number and kinds. 400 with a field error on `cursor` for anything else: not a cursor, one of
 * another list, or one made for another filter or sort.
 */
export function decodeCursor(
  raw: string,
  scope: CursorScope,
  accepts: (keys: readonly CursorValue[]) => boolean,
): CursorValue[] {
  const body = parsed(raw);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw refused('is not a cursor of this API');
  const { v, l, d, k } = body as Record<string, unknown>;
  const shaped =
    Object.keys(body).sort().join() === 'd,k,l,v' &&
    v === VERSION &&
    typeof l === 'string' &&
    typeof d === 'string' &&
    Array.isArray(k) &&
    k.every(isCursorValue);
  if (!shaped) throw refused('is not a cursor of this API');
  if (l !== scope.list) throw refused('was made for another list');
  if (d !== digestOf(scope)) throw refused('was made for another filter or sort; start again without cursor');
  if (!accepts(k)) throw refused('is not a cursor of this API');
  return k;
}

/**
 * Where the page `query` asks for starts: after its cursor's row, or at `offset` (default 0). It counts every
 * match when `total=true`, and by default only on offset pages (a cursor page skips the count).
 */
export function pageWindow(
  query: PageQuery,
  scope: CursorScope,
  accepts: (keys: readonly CursorValue[]) => boolean,
): PageWindow {
  // Also refused at the edge (PageQueryDto); here for callers that build a query themselves.
  if (query.cursor !== undefined && query.offset !== undefined) {
    throw badRequest('give offset or cursor, not both', [{ field: 'cursor', message: 'not with offset' }]);
  }
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, scope, accepts);
  return { offset: query.offset ?? 0, after, limit: query.limit, withTotal: query.total ?? after === undefined };
}

/**
 * A list's answer: `total` when the window counts, the page's items under `key`, and `next` when a match
 * follows the page (the cursor of the page after it).
 */
export function pageBody<K extends string, T>(
  window: PageWindow,
  scope: CursorScope,
  page: { readonly total?: number; readonly next?: readonly CursorValue[] },
  key: K,
  items: T[],
): { total?: number; next?: string } & Record<K, T[]> {
  const next = encodeCursor(scope, page.next);
  return {
    ...(window.withTotal ? { total: page.total ?? 0 } : {}),
    ...({ [key]: items } as Record<K, T[]>),
    ...(next === undefined ? {} : { next }),
  };
}
