// 14. Scale: every read's p99 at three data sizes (tags, entity links, config layers and history, the change
// feed), grown with SQL in one database, measured on the built api; then the fleet part (bench/scale-fleet.js).
// Rows: p99 at the largest size / at the smallest, goal ≤ 2×. `--quick` (or `--smoke`): a hundredth of the data.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import {
  benchDatabase,
  fact,
  log,
  makeIssuer,
  onCleanup,
  RESULTS,
  ROOT,
  round,
  row,
  runBenchmark,
  SMOKE,
  startProduct,
  writeResultFile,
} from './lib.js';
import { renderScaleChart } from './scale-chart.js';
import { measureFleet } from './scale-fleet.js';
import { epochs, grow, scaleSteps } from './scale-data.js';
import {
  callers,
  explainSlow,
  measurePruning,
  measureRead,
  measureRollback,
  measureWakeUp,
  readsAt,
} from './scale-reads.js';

const QUICK = SMOKE || process.argv.includes('--quick');
const SECONDS = QUICK ? 1 : 5;
const ROLLBACKS = QUICK ? 10 : 40;
const WAKE_UPS = QUICK ? 5 : 20;
const MODE = QUICK ? 'quick' : 'full';
const OPTS = { higherIsBetter: false, digits: 1 };

/** Which count a read's size is: tags for tag reads, links for entity reads, layers, history versions or events. */
function sizeKey(name, group) {
  if (group === 'config') return name.startsWith('history') ? 'versions' : 'layers';
  return { tags: 'tags', entities: 'links', feed: 'events' }[group];
}

/** The fleet part (bench/scale-fleet.js) on a database of its own; a failure there is a note, the reads stand. */
async function fleet(issuer) {
  try {
    const db = await benchDatabase('scalefleet');
    const result = await measureFleet({ quick: QUICK, issuer, databaseUrl: db.url });
    return { rows: result.rows ?? [], series: result.series ?? [], notes: result.notes ?? [] };
  } catch (error) {
    log(`scale: the fleet part failed: ${error.stack ?? error}`);
    return {
      rows: [],
      series: [],
      notes: [`fleet: skipped, it failed: ${String(error.message ?? error).split('\n')[0]}`],
    };
  }
}

/** The per-size table written beside the results: p50, p99, req/s and CPU per request of every read. */
function perSizeTable(sizes) {
  const names = Object.keys(sizes[0].measured);
  const lines = [
    '| read | size | p50 ms | p99 ms | req/s | CPU µs/req |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const name of names) {
    for (const s of sizes) {
      const m = s.measured[name];
      const cpu = m.cpuUs === undefined ? '' : Math.round(m.cpuUs);
      lines.push(
        `| ${name} | ${s.size[m.key]} ${m.key} | ${round(m.p50, 1)} | ${round(m.p99, 1)} | ${m.rps === undefined ? '' : Math.round(m.rps)} | ${cpu} |`,
      );
    }
  }
  return lines.join('\n');
}

await runBenchmark(
  'scale',
  `every read's p99 at three data sizes (${MODE}), and the fleet`,
  async () => {
    const steps = scaleSteps(QUICK);
    const db = await benchDatabase('scale');
    const issuer = await makeIssuer();
    const who = await callers(issuer);
    const pool = new pg.Pool({ connectionString: db.url, max: 2 });
    let ended = false;
    const endPool = () => (ended ? undefined : ((ended = true), pool.end()));
    onCleanup(endPool);
    const times = epochs(steps[2]);
    // The history layer keeps 100,000 versions: the default CONFIG_HISTORY_MAX_VERSIONS (1,000) would prune them.
    const startApi = (name, env) =>
      startProduct('api', {
        databaseUrl: db.url,
        issuer,
        name,
        env: { CONFIG_HISTORY_MAX_VERSIONS: '10000000', ...env },
      });
    const sizes = [];
    let previous;
    for (const [i, size] of steps.entries()) {
      const counts = await grow(db.url, previous, size, steps[0], times);
      previous = size;
      // Every event is kept while reading: the pruner runs only in the pruning part below.
      const api = await startApi(`api-scale-${i}`, { EVENTS_RETENTION_DAYS: '3650' });
      const lastSeq = Number((await pool.query('select last_value from change_event_seq')).rows[0].last_value);
      const { reads, visible, cursor } = await readsAt(api, who, { lastSeq });
      const measured = {};
      for (const read of reads) {
        const m = await measureRead(api, pool, read, SECONDS, QUICK ? 1 : 3);
        measured[read.name] = { ...m, key: sizeKey(read.name, read.group) };
        log(
          `scale ${i}: ${read.name}: p50 ${m.p50} p99 ${m.p99} ms, ${Math.round(m.rps)} req/s, ${Math.round(m.cpuUs)} µs CPU/req`,
        );
      }
      measured['history: rollback (one at a time)'] = {
        ...(await measureRollback(api, who, ROLLBACKS)),
        key: 'versions',
      };
      measured['events: long-poll wake-up'] = { ...(await measureWakeUp(api, who, WAKE_UPS, lastSeq)), key: 'events' };
      await api.stop();
      sizes.push({ size, counts, visible, cursor, measured });
    }
    const largest = sizes.at(-1);
    const plans = await explainSlow(pool, { visible: largest.visible, cursor: largest.cursor });
    const planFile = writeResultFile(`scale-plans-${MODE}.txt`, plans.text);
    log('scale: writers while the pruner deletes the older half of the events');
    const pruning = await measurePruning({
      startApi,
      who,
      pool,
      seconds: QUICK ? 3 : 10,
      limitMs: QUICK ? 30_000 : 240_000,
    });
    await endPool();

    const rows = [];
    const smallest = sizes[0];
    for (const name of Object.keys(largest.measured)) {
      const [l, s] = [largest.measured[name], smallest.measured[name]];
      // Offset paging reads and skips every row before its page by design (DESIGN 4.2): shown, no goal; cursors are the flat way.
      const goal = name === 'tags: last page by offset' ? undefined : 2;
      rows.push(
        row(
          `${name}: p99 at ${largest.size[l.key]} / ${smallest.size[s.key]} ${l.key}`,
          l.p99,
          s.p99,
          'ms',
          goal,
          OPTS,
        ),
      );
    }
    const [cursorEnd, firstPage] = [
      largest.measured['tags: last page by cursor'],
      largest.measured['tags: first page'],
    ];
    rows.push(
      row(
        `tags: last page by cursor / first page, p99 at ${largest.size.tags} tags`,
        cursorEnd.p99,
        firstPage.p99,
        'ms',
        2,
        OPTS,
      ),
    );
    if (pruning.during === undefined) {
      rows.push(
        fact(`writers' p99 while the pruner deletes ${pruning.pruned} events`, 'not observed', '', '≤ 2×', undefined),
      );
    } else {
      rows.push(
        row(
          `writers' p99 while the pruner deletes ${pruning.pruned} events / without`,
          pruning.during.p99,
          pruning.without.p99,
          'ms',
          2,
          OPTS,
        ),
      );
    }

    // Written before the fleet part, so the reads' figures survive whatever happens there.
    const table = perSizeTable(sizes);
    const counts = sizes.map((s) => JSON.stringify(s.counts)).join('; ');
    const perSizeFile = writeResultFile(
      `scale-${MODE}.md`,
      `# scale, ${MODE} mode, ${new Date().toISOString()}\n\nRows at each size: ${counts}\n\n${table}\n\n` +
        `Writers (POST /tags, 8 at once): without pruning p50 ${round(pruning.without.p50, 1)} p99 ${round(pruning.without.p99, 1)} ms ` +
        `(${pruning.without.requests} writes); during the prune (${Math.round(pruning.pruneMs)} ms, ${pruning.pruned} events) ` +
        `${pruning.during === undefined ? 'not observed' : `p50 ${round(pruning.during.p50, 1)} p99 ${round(pruning.during.p99, 1)} ms (${pruning.during.requests} writes)`}\n\n` +
        `Plans at the largest size:\n${plans.summary.map((l) => `- ${l}`).join('\n')}\n`,
    );
    const fleetPart = await fleet(issuer);
    rows.push(...fleetPart.rows);
    const series = [];
    for (const s of sizes) {
      for (const [name, m] of Object.entries(s.measured))
        series.push({ measure: name, group: m.key, size: s.size[m.key], p99Ms: m.p99 });
    }
    for (const f of fleetPart.series) series.push({ group: 'fleet', ...f });
    writeResultFile(`scale-series-${MODE}.json`, `${JSON.stringify(series, null, 1)}\n`);
    const chartFile = QUICK ? join(RESULTS, 'scale-quick.svg') : join(ROOT, 'docs', 'images', 'scale.svg');
    mkdirSync(join(chartFile, '..'), { recursive: true });
    await renderScaleChart(series, chartFile, {
      subtitle: `${MODE} run ${new Date().toISOString().slice(0, 16)}Z, Node ${process.versions.node}, 8 connections, ${SECONDS} s per read`,
    });

    process.stderr.write(`${table}\n`);
    const notes = [
      `Rows at each size (tags incl. the hot tag, links, entities, layers, history versions, events, links of the hot tag): ${counts}. ` +
        `Reader: a tenant token (host h7), who sees the global fifth of tags and entities and its host's (${sizes.map((s) => s.visible).join(' / ')} tags).`,
      `Each read: ${QUICK ? 1 : 3} request(s) first, then ${SECONDS} s of autocannon at 8 connections on a fresh api per size; CPU per request from /proc; ` +
        `the next read starts once PostgreSQL has finished the statements of the requests autocannon dropped at the end. ` +
        `Rollback: ${ROLLBACKS} one after the other (each a new version); wake-up: ${WAKE_UPS} long-polls each answered by a tag write (from the write's start). ` +
        `The cursor near the end is the next of the page before the last, fetched by offset once (what a client walking the list would hold there).`,
      `Data: SQL generate_series, grown in place from size to size, then VACUUM ANALYZE; config values plaintext in SQL (the api, with its key ring, reads both forms; rollbacks write sealed versions). ` +
        `The history layer needs CONFIG_HISTORY_MAX_VERSIONS above its 100,000 versions (default 1,000); the read apis keep events (EVENTS_RETENTION_DAYS=3650).`,
      `Pruning: a fresh api with the default EVENTS_RETENTION_DAYS (30) prunes the events older than 30 days 5 s after its start; writes started while its DELETE ran (pg_stat_activity) ` +
        `against the same writers on an api that prunes nothing.`,
      `Per size p50 / p99 / req/s / CPU: ${perSizeFile}; plans (EXPLAIN ANALYZE of the slow reads' statements): ${planFile}; chart: ${chartFile}.`,
      ...plans.summary.map((l) => `plan: ${l}`),
      ...fleetPart.notes,
    ];
    return { rows, notes };
  },
  { timeoutMs: QUICK ? 420_000 : 5_400_000 },
);
