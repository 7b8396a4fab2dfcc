import { expect } from '@jest/globals';
import type { LightMyRequestResponse } from 'fastify';
import { DataSource } from 'typeorm';
import { call, startApi, type TestApi } from './api.js';
import { callers } from './tokens.js';

/** A list's answer (DESIGN 4.2): `total` and `next` when present, the items under the list's key. */
export type PageBody = { total?: number; next?: string } & Record<string, unknown>;

/** One GET as the test's caller. */
export type Getter = (url: string) => Promise<LightMyRequestResponse>;

/** The lists' test setup: an in-process api, its DataSource, and a GET as `token` (an admin's unless given). */
export async function listsApi(
  options: { env?: Record<string, string>; token?: string } = {},
): Promise<{ api: TestApi; db: DataSource; get: Getter; token: string }> {
  const api = await startApi(options.env);
  const token = options.token ?? (await callers.admin());
  return { api, db: api.app.get(DataSource), token, get: (url) => call(api, 'GET', url, { token }) };
}

const withQuery = (url: string, query: string): string => `${url}${url.includes('?') ? '&' : '?'}${query}`;

/** A 200 list answer's body. */
export async function pageAt(get: Getter, url: string): Promise<PageBody> {
  const res = await get(url);
  expect([url, res.statusCode, res.statusCode === 200 ? '' : res.body]).toEqual([url, 200, '']);
  return res.json<PageBody>();
}

/** Every match of `url` in one offset page (at most 1000), as the reference order. */
export async function onePage(get: Getter, url: string, key: string): Promise<unknown[]> {
  const body = await pageAt(get, withQuery(url, 'limit=1000'));
  expect(body.next).toBeUndefined();
  return body[key] as unknown[];
}

/**
 * Pages through `url` as a client does: the first page, then each `next` until none. `limit` may be a
 * function of the page number (it may change between pages); `between` runs after each page, before the
 * next is asked for (concurrent writes); `from` starts at a cursor instead. Stops after `maxPages` pages, so a cursor that loops fails the test.
 */
export async function followCursors(
  get: Getter,
  url: string,
  key: string,
  limit: number | ((page: number) => number),
  options: { between?: (page: number) => Promise<void>; maxPages?: number; from?: string } = {},
): Promise<{ items: unknown[]; pages: PageBody[] }> {
  const limitOf = typeof limit === 'number' ? () => limit : limit;
  const pages: PageBody[] = [];
  let next: string | undefined = options.from;
  do {
    const query = `limit=${limitOf(pages.length)}${next === undefined ? '' : `&cursor=${next}`}`;
    const body = await pageAt(get, withQuery(url, query));
    expect((body[key] as unknown[]).length).toBeLessThanOrEqual(limitOf(pages.length));
    pages.push(body);
    next = body.next;
    if (next !== undefined) await options.between?.(pages.length);
  } while (next !== undefined && pages.length < (options.maxPages ?? 1000));
  expect(next).toBeUndefined();
  return { items: pages.flatMap((page) => page[key] as unknown[]), pages };
}

/** `value` as a cursor's text: base64url of its JSON (hand-made cursors for the 400 cases). */
export const cursorOf = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** The JSON inside a cursor (only to build wrong ones from right ones; clients treat cursors as opaque). */
export const insideOf = (cursor: string): { v: number; l: string; d: string; k: unknown[] } =>
  JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { v: number; l: string; d: string; k: unknown[] };

/** A 400 problem naming `cursor` (or `field`) that does not echo `sent`. */
export function expectCursorRefused(res: LightMyRequestResponse, sent: string, field = 'cursor'): void {
  expect([res.statusCode, res.headers['content-type']]).toEqual([
    400,
    expect.stringMatching(/^application\/problem\+json/),
  ]);
  const body = res.json<{ errors?: { field: string }[] }>();
  expect(body.errors?.map((e) => e.field)).toContain(field);
  if (sent.length > 3) expect(res.body).not.toContain(sent);
}
