import { expect } from '@jest/globals';
import { call, type TestApi } from '../support/api.js';

/** Reading the change feed (DESIGN 12) in tests. Other files write to the same database: pick your own events. */
export interface FeedEvent {
  seq: number;
  type: string;
  at: string;
  actor: string | null;
  data: Record<string, unknown>;
}
export interface FeedPage {
  events: FeedEvent[];
  next: number;
}

export async function feed(api: TestApi, as: string, query: string): Promise<FeedPage> {
  const res = await call(api, 'GET', `/events?${query}`, { token: as });
  expect(res.statusCode).toBe(200);
  return res.json<FeedPage>();
}

/** The current end of the feed as `as` reads it: a cursor from which only later events follow. */
export async function tail(api: TestApi, as: string): Promise<number> {
  let next = (await feed(api, as, 'limit=1000')).next;
  for (;;) {
    const page = await feed(api, as, `after=${next}&limit=1000`);
    if (page.next === next) return next;
    next = page.next;
  }
}

/** Every event after `after` that `as` can read, up to the current end of the feed. */
export async function readAll(api: TestApi, as: string, after: number): Promise<FeedEvent[]> {
  const events: FeedEvent[] = [];
  let cursor = after;
  for (;;) {
    const page = await feed(api, as, `after=${cursor}&limit=1000`);
    events.push(...page.events);
    // next stays put only at the end; a page whose events were all left out for `as` still moves it.
    if (page.next === cursor) return events;
    cursor = page.next;
  }
}

/** The events about one entity. */
export const about = (events: readonly FeedEvent[], entityId: string): FeedEvent[] =>
  events.filter((e) => e.data.entityId === entityId || Object.values(e.data).includes(entityId));
