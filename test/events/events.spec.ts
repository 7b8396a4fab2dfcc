import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { ChangeEventRepository } from '#database';
import { EventsService, MAX_WAITING } from '../../apps/api/events/events.service.js';
import { call, startApi, unique, type TestApi } from '../support/api.js';
import { callers } from '../support/tokens.js';
import { waitFor, withTimeout } from '../support/wait.js';

/** DESIGN 12: the change feed. Other test files write to the same database, so assertions pick their own events. */
interface Event {
  seq: number;
  type: string;
  at: string;
  actor: string | null;
  data: Record<string, unknown>;
}
interface Page {
  events: Event[];
  next: number;
}

let api: TestApi;
let admin: string;
let db: pg.Pool;

beforeAll(async () => {
  api = await startApi();
  admin = await callers.admin();
  db = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 3 });
});
afterAll(async () => {
  await api.close();
  await db.end();
});

async function feed(as: string, query: string): Promise<Page> {
  const res = await call(api, 'GET', `/events?${query}`, { token: as });
  expect(res.statusCode).toBe(200);
  return res.json<Page>();
}

/** Reads the feed from `after` until `done` holds for what was read (or 10 s pass). */
async function readUntil(as: string, after: number, done: (events: Event[]) => boolean): Promise<Event[]> {
  const events: Event[] = [];
  const deadline = Date.now() + 10_000;
  let cursor = after;
  while (!done(events) && Date.now() < deadline) {
    const page = await feed(as, `after=${cursor}&limit=1000&wait=1`);
    events.push(...page.events);
    cursor = page.next;
  }
  return events;
}

/** The current end of the feed: a cursor from which only later events follow. */
async function tail(): Promise<number> {
  let page = await feed(admin, 'limit=1000');
  for (;;) {
    const next = await feed(admin, `after=${page.next}&limit=1000`);
    if (next.events.length === 0) return next.next;
    page = next;
  }
}

/**
 * Long-polls of this file's api armed for the next commit and done reading: waiting for a wake-up (or their
 * deadline). The service's own bookkeeping, read so a test writes only once its poll truly waits.
 */
function waitingPolls(): number {
  const events = api.app.get<EventsService, { waiting: ReadonlySet<unknown>; horizonRun?: Promise<number> }>(
    EventsService,
  );
  return events.horizonRun === undefined ? events.waiting.size : 0;
}

/** A long-poll with `wait=30`: answered by a commit, never by its deadline within a test's bound. */
const LONG_WAIT = 'wait=30';

/** Bounds a long-poll's answer well below LONG_WAIT's deadline, so one answered by the deadline fails. */
const answeredByCommit = (poll: Promise<Page>): Promise<Page> => withTimeout(poll, 'the long-poll to answer', 15_000);

const nameOf = (e: Event): string => (typeof e.data.tagName === 'string' ? e.data.tagName : '');

const mine = (events: Event[], key: string, value: unknown): Event[] =>
  events.filter((e) => e.data[key] === value || (e.data.tagIds as unknown[] | undefined)?.includes(value));

describe('GET /events', () => {
  it('tells every committed write in commit order, with actor and data; a refused write tells nothing', async () => {
    const start = await tail();
    const name = unique('feed');
    const created = await call(api, 'POST', '/tags', { token: admin, body: { tagName: name } });
    const tagId = created.json<{ tagId: string }>().tagId;
    // A duplicate name is refused (409): no event, since the outbox row goes with the write or not at all.
    expect((await call(api, 'POST', '/tags', { token: admin, body: { tagName: name } })).statusCode).toBe(409);
    const schemaId = unique('s').slice(0, 22);
    const schema = await call(api, 'POST', '/schemas', {
      token: admin,
      body: { schemaId, schemaName: 'feed', tagIds: [tagId] },
    });
    expect(schema.statusCode).toBe(201);
    expect(
      (await call(api, 'PUT', `/schemas/${schemaId}/tags`, { token: admin, body: { tagIds: [] } })).statusCode,
    ).toBe(200);
    expect((await call(api, 'DELETE', `/schemas/${schemaId}`, { token: admin })).statusCode).toBe(204);
    expect((await call(api, 'DELETE', `/tags/${tagId}`, { token: admin })).statusCode).toBe(204);

    const events = await readUntil(admin, start, (read) =>
      read.some((e) => e.type === 'tag.deleted' && e.data.tagId === tagId),
    );
    const ours = events.filter(
      (e) => e.data.tagId === tagId || e.data.schemaId === schemaId || e.data.entityId === schemaId,
    );
    expect(ours.map((e) => e.type)).toEqual([
      'tag.created',
      'entity.created',
      'entity.tagged',
      'entity.untagged',
      'entity.deleted',
      'tag.deleted',
    ]);
    expect(ours[0]).toMatchObject({ actor: 'root', data: { tagId, tagName: name, hostId: null, aggregateVersion: 1 } });
    expect(ours[2]?.data).toEqual({ entityType: 'schema', entityId: schemaId, tagIds: [tagId] });
    expect(ours[3]?.data).toEqual({ entityType: 'schema', entityId: schemaId, tagIds: [tagId] });
    expect(ours[4]?.data).toEqual({ entityType: 'schema', entityId: schemaId, hostId: null });
    const seqs = ours.map((e) => e.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(Date.parse(ours[0]?.at ?? '')).toBeGreaterThan(Date.now() - 60_000);
  });

  it('shows a host-bound reader its host and global events only, and next moves past the others', async () => {
    const hostA = unique('ha').slice(0, 20);
    const hostB = unique('hb').slice(0, 20);
    const start = await tail();
    const a = await call(api, 'POST', '/tags', {
      token: await callers.writer(hostA),
      body: { tagName: unique('a'), hostId: hostA },
    });
    const b = await call(api, 'POST', '/tags', {
      token: await callers.writer(hostB),
      body: { tagName: unique('b'), hostId: hostB },
    });
    const [idA, idB] = [a.json<{ tagId: string }>().tagId, b.json<{ tagId: string }>().tagId];
    const asA = await readUntil(await callers.reader(hostA), start, (read) => read.some((e) => e.data.tagId === idA));
    expect(mine(asA, 'tagId', idA)).toHaveLength(1);
    expect(mine(asA, 'tagId', idB)).toHaveLength(0);
    expect(asA.every((e) => e.data.hostId === null || e.data.hostId === hostA || e.data.hostId === undefined)).toBe(
      true,
    );
    // Only B's event after A's: A's reader gets none of it, but its cursor passes it.
    const afterA = (await feed(await callers.reader(hostA), `after=${mine(asA, 'tagId', idA)[0]?.seq}&limit=1000`))
      .next;
    const bSeq = mine(await readUntil(admin, start, (read) => read.some((e) => e.data.tagId === idB)), 'tagId', idB)[0]
      ?.seq;
    expect(afterA).toBeGreaterThanOrEqual(bSeq ?? Infinity);
  });

  it('a long-poll answers as soon as a write commits, and after wait seconds with nothing', async () => {
    const start = await tail();
    const polled = feed(admin, `after=${start}&wait=1`);
    let answered = false;
    void polled.then(() => (answered = true));
    // It waits instead of answering at once (unless a write of another file answers it first).
    let waited = false;
    await waitFor(() => {
      waited ||= waitingPolls() === 1;
      return waited || answered;
    }, 'the poll to wait or answer');
    const none = await polled;
    if (none.events.length === 0) {
      expect(waited).toBe(true);
      expect(none.next).toBe(start);
    }
    const from = await tail();
    const name = unique('poll');
    const polling = feed(admin, `after=${from}&limit=1000&${LONG_WAIT}`);
    let woken = false;
    void polling.then(() => (woken = true));
    await waitFor(() => waitingPolls() === 1 || woken, 'the poll to wait');
    await call(api, 'POST', '/tags', { token: admin, body: { tagName: name } });
    const page = await answeredByCommit(polling);
    expect(page.events.length).toBeGreaterThan(0);
  });

  it('a long-poll answers as soon as a config write commits too (properties and files, DESIGN 14)', async () => {
    const host = unique('pollcfg');
    for (const [path, body] of [
      ['properties', { properties: { 'app.key': 1 } }],
      ['files', { files: { 'a.pem': Buffer.from('pem').toString('base64') } }],
    ] as const) {
      const from = await tail();
      const polling = feed(admin, `after=${from}&limit=1000&${LONG_WAIT}`);
      let woken = false;
      void polling.then(() => (woken = true));
      await waitFor(() => waitingPolls() === 1 || woken, 'the poll to wait');
      const kind = path === 'files' ? '&kind=cert' : '';
      const res = await call(api, 'PUT', `/config-server/admin/${path}?host=${host}&serviceId=svc${kind}`, {
        token: admin,
        body,
      });
      expect(res.statusCode).toBe(200);
      // Other files write meanwhile and may wake the poll first: poll on until this write's event arrives.
      const ours = (e: Event): boolean => e.type === 'config.changed' && e.data.host === host;
      let page = await answeredByCommit(polling);
      while (!page.events.some(ours)) {
        page = await answeredByCommit(feed(admin, `after=${page.next}&limit=1000&${LONG_WAIT}`));
      }
      expect(page.events.some(ours)).toBe(true);
    }
  });

  it('never lets a reader pass a seq that commits late: it waits for the earlier writer, then sees both in order', async () => {
    const start = await tail();
    // A writer that took its seq and has not committed yet (as a slow transaction would).
    const slow = await db.connect();
    await slow.query('begin');
    await slow.query('select pg_advisory_xact_lock_shared(7243003)');
    const { rows } = await slow.query<{ seq: string }>(
      `insert into change_event (seq, type, actor, host_id, data)
       values (nextval('change_event_seq'), 'tag.updated', 'slow', null, '{"slow": true}') returning seq`,
    );
    const slowSeq = Number(rows[0]?.seq);
    try {
      const name = unique('late');
      await call(api, 'POST', '/tags', { token: admin, body: { tagName: name } });
      // The later write has committed, with a higher seq; the feed must not show it before the slow one.
      const early = await feed(admin, `after=${start}&limit=1000`);
      expect(early.events.find((e) => e.data.tagName === name)).toBeUndefined();
      expect(early.next).toBeLessThan(slowSeq);
      await slow.query('commit');
      const events = await readUntil(admin, early.next, (read) => read.some((e) => e.data.tagName === name));
      const slowIndex = events.findIndex((e) => e.seq === slowSeq);
      const lateIndex = events.findIndex((e) => e.data.tagName === name);
      expect(slowIndex).toBeGreaterThanOrEqual(0);
      expect(lateIndex).toBeGreaterThan(slowIndex);
    } finally {
      await slow.query('rollback').catch(() => undefined);
      slow.release();
    }
  }, 30_000);

  it('concurrent writers and a resuming reader: every event exactly once', async () => {
    const start = await tail();
    const prefix = unique('conc');
    const names = Array.from({ length: 120 }, (_, i) => `${prefix}-${i}`);
    const seen: Event[] = [];
    let cursor = start;
    let writing = true;
    const reader = (async () => {
      while (writing || seen.filter((e) => nameOf(e).startsWith(prefix)).length < names.length) {
        const page = await feed(admin, `after=${cursor}&limit=7&wait=1`);
        seen.push(...page.events);
        cursor = page.next;
      }
    })();
    // Eight writers at once, each tag its own transaction.
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = w; i < names.length; i += 8) {
          const res = await call(api, 'POST', '/tags', { token: admin, body: { tagName: names[i] } });
          expect(res.statusCode).toBe(201);
        }
      }),
    );
    writing = false;
    await reader;
    const seqs = seen.map((e) => e.seq);
    expect(new Set(seqs).size).toBe(seqs.length);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    const ours = seen.filter((e) => nameOf(e).startsWith(prefix)).map((e) => e.data.tagName);
    expect([...ours].sort()).toEqual([...names].sort());
  }, 60_000);

  it('answers 410 for a cursor below the pruned mark, and from the mark on when after is omitted', async () => {
    const { rows } = await db.query<{ pruned: string }>(
      'select pruned_through::text as pruned from change_event_pruned',
    );
    const before = Number(rows[0]?.pruned);
    const mark = (await tail()) - 1;
    await db.query('update change_event_pruned set pruned_through = greatest(pruned_through, $1)', [mark]);
    try {
      const res = await call(api, 'GET', `/events?after=${mark - 1}`, { token: admin });
      expect(res.statusCode).toBe(410);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.json<{ detail: string }>().detail).toContain(`after=${mark}`);
      expect((await feed(admin, 'limit=1')).next).toBeGreaterThanOrEqual(mark);
    } finally {
      await db.query('update change_event_pruned set pruned_through = $1', [before]);
    }
  });

  it('prunes events older than the retention and moves the pruned mark past them', async () => {
    const { rows } = await db.query<{ seq: string }>(
      `insert into change_event (seq, type, at, actor, host_id, data)
       values (nextval('change_event_seq'), 'tag.deleted', now() - interval '40 days', 'old', null, '{}') returning seq`,
    );
    const old = Number(rows[0]?.seq);
    const repository = new ChangeEventRepository(api.app.get(DataSource));
    const before = await repository.prunedThrough();
    try {
      expect(await repository.prune(30)).toBeGreaterThanOrEqual(1);
      expect((await db.query('select 1 from change_event where seq = $1', [old])).rowCount).toBe(0);
      expect(await repository.prunedThrough()).toBeGreaterThanOrEqual(old);
    } finally {
      await db.query('update change_event_pruned set pruned_through = $1', [before]);
    }
  });

  it(`answers 503 beyond ${MAX_WAITING} waiting long-polls in one process`, async () => {
    const after = (await tail()) + 1_000_000;
    const polls = Array.from({ length: MAX_WAITING + 1 }, () =>
      call(api, 'GET', `/events?after=${after}&wait=3`, { token: admin }),
    );
    const statuses = (await Promise.all(polls)).map((res) => res.statusCode);
    expect(statuses.filter((s) => s === 503)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(MAX_WAITING);
  }, 30_000);

  it('refuses bad parameters with 400 and needs portal.r', async () => {
    for (const query of ['after=-1', 'after=x', 'limit=0', 'limit=1001', 'wait=0', 'wait=31', 'after=1&after=2']) {
      expect((await call(api, 'GET', `/events?${query}`, { token: admin })).statusCode).toBe(400);
    }
    expect((await call(api, 'GET', '/events')).statusCode).toBe(401);
  });
});
