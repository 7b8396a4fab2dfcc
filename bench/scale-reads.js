// The reads of `npm run bench -- scale` at one size: each under autocannon at a fixed concurrency (p50, p99 and
// the api's CPU per request from /proc), the rollback and the long-poll wake-up one at a time, and the writers
// while the change feed's pruner deletes half of the events.
import { join } from 'node:path';
import { DIST, expectStatuses, load, log, percentile, sleep } from './lib.js';
import { CONFIG_HOST, HISTORY_SERVICE, HOT_TAG, READER_HOST } from './scale-data.js';

const CONNECTIONS = 8;
const RUNTIME = 'host=bench-host&serviceId=svc-a&envTag=prod&productId=prod-a&productVersion=1.0';
const HISTORY = `host=${CONFIG_HOST}&serviceId=${HISTORY_SERVICE}`;

/** The bearer headers of each caller: a tenant reader and writer (host h7), a config admin, the runtime svc-a. */
export async function callers(issuer) {
  const bearer = async (claims) => ({ authorization: `Bearer ${await issuer.sign(claims)}` });
  return {
    reader: await bearer({ sub: 'bench-reader', scope: 'portal.r', host: READER_HOST }),
    writer: await bearer({ sub: 'bench-writer', scope: 'portal.w', host: READER_HOST }),
    admin: await bearer({ sub: 'bench-admin', scope: 'portal.admin' }),
    runtime: await bearer({ sub: 'svc-a', scope: 'portal.r', host: CONFIG_HOST, sid: 'svc-a', env: 'prod' }),
  };
}

async function call(api, path, headers, init = {}) {
  const res = await fetch(`${api.url}${path}`, { ...init, headers: { ...headers, ...init.headers } });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return { status: res.status, etag: res.headers.get('etag'), body: text === '' ? undefined : JSON.parse(text) };
}

/**
 * The reads measured at each size, each `{ name, group, path, headers, status }`. The cursor near the end is the
 * `next` of the page before the last one, fetched by offset once: the cursor a client walking the whole list
 * would hold there (walking a million rows page by page would take too long here).
 */
export async function readsAt(api, who, { lastSeq }) {
  const first = (await call(api, '/tags?limit=20', who.reader)).body;
  const visible = first.total;
  const before = (await call(api, `/tags?offset=${Math.max(0, visible - 40)}&limit=20&total=false`, who.reader)).body;
  if (before.next === undefined) throw new Error('no next near the end of the tag list');
  const [a, b] = [
    (await call(api, '/tags/tg5', who.reader)).body.tagName,
    (await call(api, '/tags/tg10', who.reader)).body.tagName,
  ];
  const runtimeEtag = (await call(api, `/config-server/configs?${RUNTIME}`, who.runtime)).etag;
  const any = `tagNames=${encodeURIComponent(`${a},${b}`)}`;
  const all = `tagNames=${encodeURIComponent(`tag-hot,${a}`)}&tagMatch=all`;
  const reads = [
    ['tags', 'tags: first page', '/tags?limit=20'],
    ['tags', 'tags: last page by offset', `/tags?offset=${visible - 20}&limit=20`],
    ['tags', 'tags: last page by cursor', `/tags?cursor=${before.next}&limit=20`],
    ['tags', 'tags: q substring', '/tags?q=needle'],
    ['tags', 'tags: q substring, total=false', '/tags?q=needle&total=false'],
    ['tags', 'tags: tagName substring', '/tags?tagName=zqx'],
    ['tags', 'tags: sort=tagDesc', '/tags?sort=tagDesc'],
    ['tags', 'tags: sort=-updateTs', '/tags?sort=-updateTs'],
    ['tags', 'tags: sort=tagId', '/tags?sort=tagId'],
    ['tags', 'tags: include=usage', '/tags?include=usage'],
    ['entities', 'hot tag: include=usage', `/tags/${HOT_TAG}?include=usage`],
    ['entities', 'schemas: tagNames any', `/schemas?${any}`],
    ['entities', 'schemas: tagNames any, total=false', `/schemas?${any}&total=false`],
    ['entities', 'schemas: tagNames all', `/schemas?${all}`],
    ['entities', 'schemas: tagNames all, total=false', `/schemas?${all}&total=false`],
    ['entities', 'hot tag: entities', `/tags/${HOT_TAG}/entities`],
    ['entities', 'hot tag: entities, total=false', `/tags/${HOT_TAG}/entities?total=false`],
    ['config', 'config: runtime read', `/config-server/configs?${RUNTIME}`, who.runtime],
    [
      'config',
      'config: runtime read 304',
      `/config-server/configs?${RUNTIME}`,
      { ...who.runtime, 'if-none-match': runtimeEtag },
      304,
    ],
    ['config', 'history: first page', `/config-server/admin/history?${HISTORY}`, who.admin],
    ['config', 'history: first page, total=false', `/config-server/admin/history?${HISTORY}&total=false`, who.admin],
    ['config', 'history: one version', `/config-server/admin/history/1?${HISTORY}`, who.admin],
    ['feed', 'events: after=<recent>', `/events?after=${Math.max(0, lastSeq - 50)}&limit=100`],
  ];
  return {
    visible,
    cursor: before.next,
    names: [a, b],
    reads: reads.map(([group, name, path, headers = who.reader, status = 200]) => ({
      group,
      name,
      path,
      headers,
      status,
    })),
  };
}

/** One read: `warmUp` requests (plans, caches), `seconds` at CONNECTIONS (the api's CPU per request), a drain. */
export async function measureRead(api, pool, read, seconds, warmUp = 3) {
  for (let i = 0; i < warmUp; i += 1) {
    const res = await fetch(`${api.url}${read.path}`, { headers: read.headers });
    await res.arrayBuffer();
    if (res.status !== read.status) throw new Error(`${read.name}: ${res.status}, expected ${read.status}`);
  }
  const cpu = api.cpuMicros();
  const run = await load({
    url: `${api.url}${read.path}`,
    connections: CONNECTIONS,
    duration: seconds,
    headers: read.headers,
  });
  expectStatuses(read.name, run, [read.status]);
  const cpuUs = (api.cpuMicros() - cpu) / run.total;
  await untilDrained(pool, read.name);
  return { p50: run.p50, p99: run.p99, rps: run.rps, requests: run.total, cpuUs };
}

/**
 * Waits until PostgreSQL runs no client statement of the bench database but this one. autocannon drops its
 * requests in flight when a run ends, and the api's statements run on to their end: at 1,000,000 tags eight
 * 2 s offset scans would share the cores with the next read's first seconds.
 */
async function untilDrained(pool, after, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query(
      `select count(*)::int as n from pg_stat_activity
       where datname = current_database() and backend_type = 'client backend' and state = 'active'
         and pid <> pg_backend_pid()`,
    );
    if (rows[0].n === 0) return;
    if (Date.now() > deadline) throw new Error(`${after}: statements still running ${timeoutMs} ms after the run`);
    await sleep(50);
  }
}

const stats = (ms) => ({ p50: percentile(ms, 50), p99: percentile(ms, 99), requests: ms.length });

/**
 * Rollbacks of the layer with the long history, one after the other (each is a write: a new version), alternating
 * between versions 2 and 1 so each one changes the content; `If-Match` is the version the previous one made.
 */
export async function measureRollback(api, who, count) {
  const page = (await call(api, `/config-server/admin/history?${HISTORY}&limit=1&total=false`, who.admin)).body;
  let current = page.versions[0].version;
  const ms = [];
  for (let i = 0; i < count; i += 1) {
    const started = performance.now();
    const res = await call(api, `/config-server/admin/rollback?${HISTORY}&version=${2 - (i % 2)}`, who.admin, {
      method: 'POST',
      headers: { 'if-match': `W/"${current}"`, 'x-change-reason': 'bench rollback' },
    });
    ms.push(performance.now() - started);
    current = Number(/\d+/.exec(res.etag)?.[0]);
  }
  return stats(ms);
}

/** A long-poll waiting at the feed's head, answered by a tag write: from the write's start to the poll's answer. */
export async function measureWakeUp(api, who, count, lastSeq) {
  let after = (await call(api, `/events?after=${lastSeq}&limit=1000`, who.reader)).body.next;
  const ms = [];
  for (let i = 0; i < count; i += 1) {
    const poll = call(api, `/events?after=${after}&wait=10`, who.reader);
    await sleep(100);
    const started = performance.now();
    await call(api, '/tags', who.writer, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ tagName: `wake-${process.pid}-${api.port}-${i}`, hostId: READER_HOST }),
    });
    const answer = (await poll).body;
    ms.push(performance.now() - started);
    if (answer.events.length === 0) throw new Error('the long-poll was answered without the write');
    after = answer.next;
  }
  return stats(ms);
}

/** `connections` writers creating tags until `stop()`; each sample is its start (performance.now) and latency. */
let written = 0;

export async function writers(api, who, stop, connections = CONNECTIONS) {
  const samples = [];
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (!stop()) {
        const body = JSON.stringify({ tagName: `w-${process.pid}-${(written += 1)}`, hostId: READER_HOST });
        const started = performance.now();
        await call(api, '/tags', who.writer, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        samples.push({ started, ms: performance.now() - started });
      }
    }),
  );
  return samples;
}

/**
 * Writers' latency while the api's own pruner (EVENTS_RETENTION_DAYS, 30 by default; first run 5 s after start)
 * deletes the events older than 30 days, against the same writers on an api keeping every event. The prune's
 * start and end are seen in pg_stat_activity; only writes started within it count.
 */
export async function measurePruning({ startApi, who, pool, seconds, limitMs }) {
  const quiet = await startApi('api-scale-keep', { EVENTS_RETENTION_DAYS: '3650' });
  await writers(quiet, who, deadline(1000));
  const without = stats((await writers(quiet, who, deadline(seconds * 1000))).map((s) => s.ms));
  await quiet.stop();
  // Counted among the events there before: the writers below add events of their own.
  const last = (await pool.query('select max(seq) as seq from change_event')).rows[0].seq;
  const kept = async () =>
    Number((await pool.query('select count(*) from change_event where seq <= $1', [last])).rows[0].count);
  const before = await kept();
  const pruning = await startApi('api-scale-prune', {});
  const window = { start: undefined, end: undefined };
  let done = false;
  const stopAt = Date.now() + limitMs;
  const watch = (async () => {
    while (!done && Date.now() < stopAt) {
      const { rows } = await pool.query(
        `select count(*)::int as n from pg_stat_activity where state = 'active' and pid <> pg_backend_pid()
           and datname = current_database() and query ilike '%delete from change_event where at%'`,
      );
      const now = performance.now();
      if (rows[0].n > 0) {
        window.start ??= now;
        window.end = now;
      } else if (window.start !== undefined) done = true;
      await sleep(20);
    }
    done = true;
  })();
  const samples = await writers(pruning, who, () => done);
  await watch;
  await pruning.stop();
  const after = await kept();
  // A prune shorter than the 20 ms poll may go unseen (small sizes): then there is no "during".
  if (window.start === undefined) return { without, during: undefined, pruned: before - after, pruneMs: 0 };
  const during = samples.filter((s) => s.started >= window.start && s.started <= window.end).map((s) => s.ms);
  const pruneMs = window.end - window.start;
  log(`scale: pruned ${before - after} events in about ${Math.round(pruneMs)} ms; ${during.length} writes meanwhile`);
  return { without, during: during.length > 0 ? stats(during) : undefined, pruned: before - after, pruneMs };
}

function deadline(ms) {
  const end = Date.now() + ms;
  return () => Date.now() >= end;
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of the statements behind the reads expected to grow, at the largest size: usage, reverse
 * lookup and history counts from the product's own statement builders; the tag list's written out as
 * TagRepository.page builds them (it runs them inline). One line each, and every plan.
 */
export async function explainSlow(pool, { visible, cursor }) {
  const links = await import(join(DIST, 'libs/database/repositories/entity-link.sql.js'));
  const { COUNT_VERSIONS } = await import(join(DIST, 'libs/database/repositories/config-history.sql.js'));
  const { TAGGABLE_TABLES } = await import(join(DIST, 'libs/database/index.js'));
  const visibility = { allHosts: false, host: READER_HOST };
  const q = '(t.tag_name ilike $2 or t.tag_desc ilike $2)';
  const count = (w) => `(select count(*)::int from tag t where t.host_id = $1 and ${w})`;
  const counted = (w) => `, ${count(w)} + ${count(w).replace('= $1', 'is null')} as total`;
  const tags = (label, where, parameters, total = '', offset = '0') => [
    label,
    `select t.tag_id, t.host_id, t.tag_name, t.tag_desc, t.update_user, t.update_ts, t.aggregate_version,
       lower(t.tag_name) as "k0", t.tag_id as "k1"${total} from tag t where true and (t.host_id is null or t.host_id = $1)
       ${where} order by lower(t.tag_name) asc, t.tag_id asc offset ${offset} limit 21`,
    [READER_HOST, ...parameters],
  ];
  const after = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')).k;
  const layer = `(select layer_id from config_layer where host = '${CONFIG_HOST}' and service_id = '${HISTORY_SERVICE}')`;
  // The product's usage statement where dist has one (counters); else the count of links it ran before.
  const linked = links.visibleLinks(TAGGABLE_TABLES, visibility, 'et.tag_id = any($1::varchar[])', [[HOT_TAG]]);
  const usage = links.usageStatement?.(TAGGABLE_TABLES, [HOT_TAG], visibility) ?? [
    `select l.tag_id, l.entity_type, count(*)::int as n from (${linked.sql}) l group by 1, 2`,
    linked.parameters,
  ];
  const tagCount = `, (select coalesce(sum(tags), 0)::int from tag_count where host_key in ('', $1)) as total`;
  const statements = [
    tags('tags: q substring (page and total)', `and ${q}`, ['%needle%'], counted(q)),
    tags('tags: q substring, total=false (page)', `and ${q}`, ['%needle%']),
    tags(
      'tags: tagName substring (page and total)',
      'and t.tag_name ilike $2',
      ['%zqx%'],
      counted('t.tag_name ilike $2'),
    ),
    tags('tags: last page by offset', '', [visible - 20], tagCount, '$2'),
    tags(
      'tags: last page by cursor',
      'and (lower(t.tag_name), t.tag_id) > (cast($2 as text), cast($3 as text))',
      after,
    ),
    ['hot tag: include=usage', ...usage],
    [
      'hot tag: entities (total)',
      ...links.entitiesOfStatements(TAGGABLE_TABLES, HOT_TAG, visibility, { offset: 0, limit: 21 }).count,
    ],
    ['history: first page (total)', COUNT_VERSIONS.replace('$1', layer), []],
  ];
  let text = '';
  const summary = [];
  for (const [label, sql, parameters] of statements) {
    const plan = (await pool.query(`explain (analyze, buffers) ${sql}`, parameters)).rows.map((r) => r['QUERY PLAN']);
    text += `-- ${label}\n${sql}\n${plan.join('\n')}\n\n`;
    const short = (line) =>
      line
        ?.trim()
        .replace(/\(cost=[^)]*\) /, '')
        .replace(/^->\s*/, '');
    // The scan that returned the most rows, and every row a filter threw away: where the time went.
    const rowsOf = (l) =>
      Number(
        /rows=(\d+) loops=(\d+)\)$/
          .exec(l)
          ?.slice(1)
          .reduce((x, y) => x * y) ?? -1,
      );
    const scan = plan.filter((l) => /Scan/.test(l) && !/Bitmap Index/.test(l)).sort((x, y) => rowsOf(y) - rowsOf(x))[0];
    const removed = plan.reduce((sum, l) => sum + Number(/Rows Removed by Filter: (\d+)/.exec(l)?.[1] ?? 0), 0);
    const time = plan.find((l) => /Execution Time/.test(l));
    summary.push(`${label}: ${short(time)}; ${short(scan)}; rows removed by filters: ${removed}`);
  }
  return { text, summary };
}
