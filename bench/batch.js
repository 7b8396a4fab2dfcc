// 8. Bulk tagging: POST /tags/batch with 1,000 add operations vs the same 1,000 taggings as single
// PUT /schemas/{id}/tags calls, one after the other (what a client without the batch route does) and
// with 8 in flight (a client that parallelises), on fresh entities each time.
import pg from 'pg';
import { benchDatabase, log, makeIssuer, median, round, row, runBenchmark, SMOKE, startProduct } from './lib.js';

const OPERATIONS = 1000;
/** Rounds of each side; every round tags 1,000 entities not tagged before. */
const ROUNDS = SMOKE ? 1 : 5;
const ENTITIES = 3 * ROUNDS * OPERATIONS + OPERATIONS;
const TAGS = 50;
const IN_FLIGHT = 8;

async function seed(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(
    `insert into tag (tag_id, tag_name, update_user) select 'bt' || g, 'batch-' || g, 'bench'
     from generate_series(0, $1::int - 1) g`,
    [TAGS],
  );
  await client.query(
    `insert into schema (schema_id, schema_name, update_user) select 'bs' || g, 'schema ' || g, 'bench'
     from generate_series(0, $1::int - 1) g`,
    [ENTITIES],
  );
  await client.query('analyze');
  await client.end();
}

const tagsOf = (i) => [`bt${i % TAGS}`, `bt${(i + 7) % TAGS}`];

/** Seconds for one batch request of 1,000 operations on entities [first, first + 1000). */
async function oneBatch(api, token, first) {
  const operations = Array.from({ length: OPERATIONS }, (_, k) => ({
    op: 'add',
    entityType: 'schema',
    entityId: `bs${first + k}`,
    tagIds: tagsOf(first + k),
  }));
  const started = performance.now();
  const res = await fetch(`${api.url}/tags/batch`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ operations }),
  });
  const body = await res.json();
  const seconds = (performance.now() - started) / 1000;
  const failed = res.status === 200 ? body.results.filter((r) => r.status !== 200) : [body];
  if (failed.length > 0) throw new Error(`batch: ${res.status} ${JSON.stringify(failed.slice(0, 3))}`);
  return seconds;
}

/** Seconds for 1,000 single PUT /schemas/{id}/tags calls, `inFlight` at a time. */
async function singles(api, token, first, inFlight) {
  let next = 0;
  const errors = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < OPERATIONS) {
        const i = first + next++;
        const res = await fetch(`${api.url}/schemas/bs${i}/tags`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ tagIds: tagsOf(i) }),
        });
        await res.arrayBuffer();
        if (res.status !== 200) errors.push(res.status);
      }
    }),
  );
  if (errors.length > 0) throw new Error(`singles: statuses ${[...new Set(errors)].join(', ')}`);
  return (performance.now() - started) / 1000;
}

await runBenchmark('batch', 'POST /tags/batch (1,000 operations) vs 1,000 single PUT calls', async () => {
  const db = await benchDatabase('batch');
  await seed(db.url);
  const issuer = await makeIssuer();
  const api = await startProduct('api', { databaseUrl: db.url, issuer });
  const token = await issuer.sign({ sub: 'bench', scope: 'portal.admin' });
  log('warm-up');
  await singles(api, token, ENTITIES - OPERATIONS, IN_FLIGHT);
  const rates = { batch: [], sequential: [], parallel: [] };
  for (let r = 0; r < ROUNDS; r++) {
    // Rotate which side goes first; each run's entities are untouched.
    const first = {
      batch: r * 3 * OPERATIONS,
      sequential: (r * 3 + 1) * OPERATIONS,
      parallel: (r * 3 + 2) * OPERATIONS,
    };
    const run = async (side) => {
      const seconds =
        side === 'batch'
          ? await oneBatch(api, token, first.batch)
          : await singles(api, token, first[side], side === 'sequential' ? 1 : IN_FLIGHT);
      rates[side].push(OPERATIONS / seconds);
    };
    const order = ['batch', 'sequential', 'parallel'];
    for (let k = 0; k < order.length; k++) await run(order[(k + r) % order.length]);
    log(
      `  round ${r + 1}: batch ${round(rates.batch.at(-1))} ops/s, single calls ${round(rates.sequential.at(-1))} ` +
        `(one at a time) and ${round(rates.parallel.at(-1))} (${IN_FLIGHT} in flight)`,
    );
  }
  await api.stop();
  return {
    rows: [
      row('taggings/s, batch vs single calls one at a time', median(rates.batch), median(rates.sequential), 'ops/s', 5),
      row(
        `taggings/s, batch vs single calls ${IN_FLIGHT} in flight`,
        median(rates.batch),
        median(rates.parallel),
        'ops/s',
        5,
      ),
    ],
    notes: [
      `Each side tags ${OPERATIONS} untagged schemas (two tags each) per round, ${ROUNDS} round(s), sides alternating ` +
        `first; median kept. The batch is one transaction of 7 statements whatever its size: its tags, its ` +
        `entities (locked) and their links read in one statement each, every operation worked out in order with ` +
        `the rules of a single write (visibility, write access, known tags, the cap), then the net links and ` +
        `versions in one statement and the change events in one. Baselines: the same taggings as ` +
        `PUT /schemas/{id}/tags, one call after the other (a client without the batch route), and ${IN_FLIGHT} ` +
        `in flight (a client that parallelises).`,
    ],
  };
});
