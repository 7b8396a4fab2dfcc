// 9. The change feed's cost and delay: POST /tags throughput with the outbox as shipped vs the same writes
// with the outbox's rows discarded (a BEFORE INSERT trigger returning NULL on change_event, toggled between
// runs of the same process); then the delay from a write's answer to a long-polling reader's receipt (p99).
import pg from 'pg';
import {
  benchDatabase,
  expectStatuses,
  fact,
  load,
  log,
  makeIssuer,
  median,
  percentile,
  round,
  row,
  runBenchmark,
  sleep,
  SMOKE,
  startProduct,
  WARM_UP_SECONDS,
} from './lib.js';

const ROUNDS = SMOKE ? 1 : 3;
const CONNECTIONS = 8;
const POLLED_WRITES = SMOKE ? 100 : 400;

/** Turns the outbox's storage off (rows dropped before insert) or on again, for the whole database. */
async function outbox(url, on) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`
    create or replace function bench_discard_event() returns trigger language plpgsql as $$
    begin return null; end $$`);
  await client.query('drop trigger if exists bench_discard_event on change_event');
  if (!on) {
    await client.query(`create trigger bench_discard_event before insert on change_event
      for each row execute function bench_discard_event()`);
  }
  await client.end();
}

let counter = 0;

/** POST /tags with a new name each time (autocannon builds each request). */
function writes(api, token) {
  return {
    url: `${api.url}/tags`,
    connections: CONNECTIONS,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    requests: [
      {
        method: 'POST',
        setupRequest: (request) => ({
          ...request,
          body: JSON.stringify({ tagName: `ev-${process.pid}-${counter++}` }),
        }),
      },
    ],
  };
}

/** Milliseconds from each write's answer to a long-polling reader's receipt of its event. */
async function delays(api, token) {
  const answered = new Map();
  const received = [];
  let stop = false;
  const start = await (
    await fetch(`${api.url}/events?limit=1000`, { headers: { authorization: `Bearer ${token}` } })
  ).json();
  let cursor = start.next;
  for (;;) {
    const page = await (
      await fetch(`${api.url}/events?after=${cursor}&limit=1000`, { headers: { authorization: `Bearer ${token}` } })
    ).json();
    if (page.events.length === 0) break;
    cursor = page.next;
  }
  const reader = (async () => {
    while (!stop) {
      const res = await fetch(`${api.url}/events?after=${cursor}&limit=1000&wait=5`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const page = await res.json();
      const now = performance.now();
      for (const event of page.events) {
        const t0 = answered.get(event.data.tagName);
        if (t0 !== undefined) received.push(now - t0);
      }
      cursor = page.next;
    }
  })();
  for (let i = 0; i < POLLED_WRITES; i++) {
    const tagName = `poll-${process.pid}-${i}`;
    const res = await fetch(`${api.url}/tags`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tagName }),
    });
    await res.arrayBuffer();
    answered.set(tagName, performance.now());
    await sleep(10);
  }
  await sleep(1000);
  stop = true;
  await reader;
  return { received, expected: POLLED_WRITES };
}

await runBenchmark('events', 'writes with the change-feed outbox vs without; commit-to-reader delay', async () => {
  const db = await benchDatabase('events');
  const issuer = await makeIssuer();
  const api = await startProduct('api', { databaseUrl: db.url, issuer });
  const token = await issuer.sign({ sub: 'bench', scope: 'portal.admin' });
  log('warm-up');
  expectStatuses('warm-up', await load({ ...writes(api, token), duration: WARM_UP_SECONDS }), [201]);
  const on = [];
  const off = [];
  for (let r = 0; r < ROUNDS; r++) {
    for (const side of r % 2 === 0 ? ['on', 'off'] : ['off', 'on']) {
      await outbox(db.url, side === 'on');
      const run = await load(writes(api, token));
      expectStatuses(`writes, outbox ${side}`, run, [201]);
      (side === 'on' ? on : off).push(run.rps);
    }
    log(`  round ${r + 1}: outbox on ${round(on.at(-1))} writes/s, off ${round(off.at(-1))}`);
  }
  await outbox(db.url, true);
  const { received, expected } = await delays(api, token);
  await api.stop();
  return {
    rows: [
      row('POST /tags throughput, outbox on vs off', median(on), median(off), 'writes/s', 0.85),
      fact('write answered → long-poll reader has it, p50', round(percentile(received, 50), 1), 'ms'),
      fact('write answered → long-poll reader has it, p99', round(percentile(received, 99), 1), 'ms'),
      fact(
        'events received by the reader',
        `${received.length} of ${expected}`,
        'events',
        `${expected}`,
        received.length === expected,
      ),
    ],
    notes: [
      `Both sides are the same api process and the same POST /tags (${CONNECTIONS} connections, a new name each). ` +
        `Off, a BEFORE INSERT trigger drops change_event rows, so the baseline still sends the outbox statement ` +
        `(one round trip, the shared lock, nextval) but stores, indexes and notifies nothing: the ratio prices ` +
        `the event's storage and notification, not the round trip.`,
      `Delay: ${POLLED_WRITES} writes 10 ms apart while one reader long-polls (wait=5) from the end of the feed; ` +
        `measured from each write's HTTP answer (after its commit) to the reader's answer holding its event.`,
    ],
  };
});
