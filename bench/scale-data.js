// The data of `npm run bench -- scale`: three sizes of tags, entity links, config layers, one layer's history
// and the change feed, generated with SQL (generate_series, INSERT ... SELECT). One database grows from the
// smallest size to the next (only the difference is inserted), then VACUUM ANALYZE.
import pg from 'pg';
import { log } from './lib.js';

const FULL = {
  tags: [10_000, 100_000, 1_000_000],
  links: [100_000, 1_000_000, 5_000_000],
  layers: [1_000, 10_000, 100_000],
  versions: [1_000, 10_000, 100_000],
  events: [10_000, 100_000, 1_000_000],
};

/** The three sizes, full or quick (each a hundredth, so the quick run fits CI's smoke step). */
export function scaleSteps(quick) {
  const div = quick ? 100 : 1;
  return [0, 1, 2].map((i) => Object.fromEntries(Object.entries(FULL).map(([k, v]) => [k, v[i] / div])));
}

/** The reader's host: tenants see global tags and their own host's (DESIGN 4.3). */
export const READER_HOST = 'h7';
export const HOT_TAG = 'tghot';
export const HISTORY_SERVICE = 'svc-hist';
export const CONFIG_HOST = 'bench-host';
const BASE_PROPERTIES = 25;
const NO_FILES = '{"cert":{},"file":{}}';

// Hosts of rows numbered n: every fifth global, the others spread over 100 hosts h0..h99.
const hostOf = (n) => `case when ${n} % 5 = 0 then null else 'h' || ((${n} / 5) % 100) end`;

/** The `q` and `tagName` matches: a fixed set of global tags (the same count at every size). */
function markers(smallest) {
  const globals = smallest.tags / 5;
  const count = Math.min(40, globals);
  return { count, step: Math.floor(globals / count) };
}

/** Drops `table`'s secondary indexes (and entity_tag's keys) during a bulk insert, re-created from their own definitions. */
async function withoutIndexes(q, table, insert) {
  const keys =
    table === 'entity_tag'
      ? (
          await q(
            `select conname, pg_get_constraintdef(oid) as def from pg_constraint
             where conrelid = 'entity_tag'::regclass and contype in ('p', 'f') order by contype desc`,
          )
        ).rows
      : [];
  const indexes = (
    await q(
      `select indexname, indexdef from pg_indexes where tablename = $1
       and indexname not in (select conname from pg_constraint where conrelid = $1::regclass)`,
      [table],
    )
  ).rows;
  for (const c of [...keys].reverse()) await q(`alter table ${table} drop constraint ${c.conname}`);
  for (const i of indexes) await q(`drop index ${i.indexname}`);
  await insert();
  for (const c of keys) await q(`alter table ${table} add constraint ${c.conname} ${c.def}`);
  for (const i of indexes) await q(i.indexdef);
}

const ENTITY_TABLES = [
  {
    type: 'schema',
    prefix: 'sc',
    sql: `insert into schema (schema_id, host_id, schema_name, schema_version, schema_type, schema_desc, update_user, update_ts)
      select 'sc' || n, HOST, 'schema ' || substr(md5('sc' || n), 1, 12), '1.0.' || (n % 10), 'json-schema', 'bench schema ' || n, 'bench', $3::timestamptz + n * interval '1 second'`,
  },
  {
    type: 'product',
    prefix: 'pr',
    sql: `insert into product (product_id, host_id, product_name, product_version, product_desc, update_user, update_ts)
      select 'pr' || n, HOST, 'product ' || substr(md5('pr' || n), 1, 12), '2.' || (n % 10), 'bench product ' || n, 'bench', $3::timestamptz + n * interval '1 second'`,
  },
  {
    type: 'document',
    prefix: 'dc',
    sql: `insert into document (document_id, host_id, title, content_type, body, update_user, update_ts)
      select 'dc' || n, HOST, 'document ' || substr(md5('dc' || n), 1, 12), 'text/plain', 'bench document ' || n, 'bench', $3::timestamptz + n * interval '1 second'`,
  },
];

/** Rows present at `size` (zeros before the first). */
const entitiesPerType = (size) => Math.floor(size.links / 5 / 3);

/**
 * Grows the database from `from` (undefined: empty) to `to`. Tags: every fifth global, `needle` in 20-40 global
 * tags' descriptions and `zqx` in as many names (pg_trgm needs 3 characters), and `tghot`, a global tag on every tenth entity (2 % of links,
 * 100,000 at 5M). Each entity carries 5 global tags (its own host's visibility holds). Events: `at` spread over 60
 * days in seq order, so the first half of the largest size is older than the pruner's default 30 days.
 */
export async function grow(url, from, to, smallest, epochs) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const q = (sql, params) => client.query(sql, params);
  const started = Date.now();
  await q(`set synchronous_commit = off`);
  await q(`set maintenance_work_mem = '256MB'`);
  const before = from ?? { tags: 0, links: 0, layers: 0, versions: 0, events: 0 };
  const mark = markers(smallest);
  const marked = (j, word, at) =>
    `case when g % 5 = 0 and ${j} < ${mark.count * mark.step} and ${j} % ${mark.step} = ${at} then '${word}' else '' end`;
  await withoutIndexes(q, 'tag', () =>
    q(
      `insert into tag (tag_id, host_id, tag_name, tag_desc, update_user, update_ts)
       select 'tg' || g, ${hostOf('g')},
         'tag-' || substr(md5(g::text), 1, 8) || ${marked('g / 5', '-zqx', Math.floor(mark.step / 2))} || '-' || g,
         ${marked('g / 5', 'needle ', 0)} || 'bench tag ' || g, 'bench', $3::timestamptz + g * interval '1 second'
       from generate_series($1::int, $2::int - 1) g`,
      [before.tags, to.tags, epochs.rows],
    ),
  );
  if (from === undefined) {
    // Named tag-h..., after every tag-<hex> name: the list's first pages hold ordinary tags.
    await q(
      `insert into tag (tag_id, host_id, tag_name, tag_desc, update_user) values ($1, null, 'tag-hot', 'on 2 % of entities', 'bench')`,
      [HOT_TAG],
    );
  }
  const [e0, e1] = [from === undefined ? 0 : entitiesPerType(before), entitiesPerType(to)];
  const globals = to.tags / 5;
  for (const t of ENTITY_TABLES) {
    await q(`${t.sql.replace('HOST', hostOf('n'))} from generate_series($1::int, $2::int - 1) n`, [
      e0,
      e1,
      epochs.rows,
    ]);
  }
  await withoutIndexes(q, 'entity_tag', async () => {
    for (const t of ENTITY_TABLES) {
      // Five distinct global tags per entity ((7n + k·G/5) mod G, k < 5); slot 0 is the hot tag on every tenth.
      await q(
        `insert into entity_tag (entity_type, entity_id, tag_id, entity_host_id)
         select $3, '${t.prefix}' || n,
           case when k = 0 and n % 10 = 0 then '${HOT_TAG}' else 'tg' || (5 * ((n * 7 + k * ($4::int / 5)) % $4::int)) end,
           ${hostOf('n')}
         from generate_series($1::int, $2::int - 1) n, generate_series(0, 4) k`,
        [e0, e1, t.type, globals],
      );
    }
  });
  await growConfig(q, before, to, from === undefined, epochs);
  await withoutIndexes(q, 'change_event', () =>
    q(
      `insert into change_event (seq, type, at, actor, host_id, data)
       select nextval('change_event_seq'), 'tag.created', $3::timestamptz + n * $4::float8 * interval '1 second', 'bench', null,
         jsonb_build_object('tagId', 'ev' || n, 'hostId', null, 'tagName', 'event ' || n, 'aggregateVersion', 1)
       from generate_series($1::bigint + 1, $2::bigint) n order by n`,
      [before.events, to.events, epochs.events, epochs.eventSpacing],
    ),
  );
  // The whole database: counter tables the migrations add (tag_count, tag_usage...) are analysed too.
  await q('vacuum analyze');
  const counts = (
    await q(
      `select (select count(*) from tag)::int as tags, (select count(*) from entity_tag)::int as links,
      (select count(*) from schema)::int + (select count(*) from product)::int + (select count(*) from document)::int as entities,
      (select count(*) from config_layer)::int as layers, (select count(*) from change_event)::int as events,
      (select aggregate_version from config_layer where service_id = $1) as versions,
      (select count(*) from entity_tag where tag_id = $2)::int as "hotLinks"`,
      [HISTORY_SERVICE, HOT_TAG],
    )
  ).rows[0];
  await client.end();
  log(`scale: grew to ${JSON.stringify(counts)} in ${Math.round((Date.now() - started) / 1000)} s`);
  return counts;
}

const keysOf = (n) => Array.from({ length: n }, (_, k) => `app.key${k}`);
/** A version's change naming every key as added (a layer's first version). */
const addedAll = (keys) => JSON.stringify({ added: [...keys].sort(), changed: [], removed: [], sha256: {} });

/**
 * Config: bulk layers over 100 hosts (10 properties each, and their version 1, as the api would have written them),
 * the runtime's four layers of 25 properties (as bench/config.js), and one service layer whose history grows to
 * `to.versions` versions, each changing `app.counter`. Values are plaintext: the api reads both forms (DESIGN 17).
 */
async function growConfig(q, before, to, first, epochs) {
  const bulkKeys = keysOf(10);
  await q(
    `with layers as (
       insert into config_layer (host, service_id, env_tag, update_user)
       select 'cfg-h' || (n % 100), 'svc-' || n, case when n % 2 = 0 then null else 'prod' end, 'bench'
       from generate_series($1::int, $2::int - 1) n returning layer_id
     ), properties as (
       insert into config_property (layer_id, property_key, property_value)
       select layer_id, 'app.key' || k, to_jsonb('value ' || k) from layers, generate_series(0, 9) k
     )
     insert into config_layer_version (layer_id, version, actor, change, properties, files, file_contents)
     select layer_id, 1, 'bench', $3::jsonb, (select jsonb_object_agg('app.key' || k, 'value ' || k) from generate_series(0, 9) k),
       '${NO_FILES}', '${NO_FILES}' from layers`,
    [first ? 0 : before.layers - 5, to.layers - 5, addedAll(bulkKeys)],
  );
  const base = Object.fromEntries(keysOf(BASE_PROPERTIES).map((k, i) => [k, `value ${i}`]));
  if (first) {
    const runtime = [
      [null, 'prod-a', '1.0', null],
      [null, 'prod-a', '1.0', 'prod'],
      ['svc-a', null, null, null],
      ['svc-a', null, null, 'prod'],
      [HISTORY_SERVICE, null, null, null],
    ];
    for (const [k, [serviceId, productId, productVersion, envTag]] of runtime.entries()) {
      const { rows } = await q(
        `insert into config_layer (host, service_id, product_id, product_version, env_tag, update_user)
         values ($1, $2, $3, $4, $5, 'bench') returning layer_id`,
        [CONFIG_HOST, serviceId, productId, productVersion, envTag],
      );
      // Keys shifted by layer: higher layers override some of the lower ones' keys (the merge has work).
      const properties =
        serviceId === HISTORY_SERVICE
          ? { ...base, 'app.counter': 1 }
          : Object.fromEntries(
              keysOf(BASE_PROPERTIES).map((_, i) => [`app.key${i + k * 10}`, `value ${i} of layer ${k}`]),
            );
      await q(
        `insert into config_property (layer_id, property_key, property_value) select $1, e.key, e.value from jsonb_each($2::jsonb) e`,
        [rows[0].layer_id, JSON.stringify(properties)],
      );
      if (serviceId !== HISTORY_SERVICE) {
        await q(
          `insert into config_layer_version (layer_id, version, actor, change, properties, files, file_contents)
           values ($1, 1, 'bench', $2::jsonb, $3::jsonb, '${NO_FILES}', '${NO_FILES}')`,
          [rows[0].layer_id, addedAll(Object.keys(properties)), JSON.stringify(properties)],
        );
      }
    }
  }
  const { rows } = await q(`select layer_id, aggregate_version from config_layer where host = $1 and service_id = $2`, [
    CONFIG_HOST,
    HISTORY_SERVICE,
  ]);
  const layer = rows[0].layer_id;
  // Rollbacks measured at the previous size added versions: numbering goes on after them, without gaps.
  await q(
    `insert into config_layer_version (layer_id, version, at, actor, reason, change, properties, files, file_contents)
     select $1, v, $4::timestamptz + v * interval '1 second', 'bench', 'bench history',
       case when v = 1 then $5::jsonb else '{"added":[],"changed":["app.counter"],"removed":[],"sha256":{}}' end,
       $6::jsonb || jsonb_build_object('app.counter', v), '${NO_FILES}', '${NO_FILES}'
     from generate_series($2::int, $3::int) v`,
    [
      layer,
      first ? 1 : rows[0].aggregate_version + 1,
      to.versions,
      epochs.history,
      addedAll([...Object.keys(base), 'app.counter']),
      JSON.stringify(base),
    ],
  );
  // The layer's counter and content become those of its last version (plaintext: a rollback may have sealed them).
  await q(`update config_layer set aggregate_version = $2, data_key_id = null where layer_id = $1`, [
    layer,
    to.versions,
  ]);
  await q(`delete from config_property where layer_id = $1`, [layer]);
  await q(
    `insert into config_property (layer_id, property_key, property_value) select $1, e.key, e.value from jsonb_each($2::jsonb) e`,
    [layer, JSON.stringify({ ...base, 'app.counter': to.versions })],
  );
}

/** Times the generated rows count from: rows and history in the recent past, events spread over 60 days. */
export function epochs(largest) {
  const now = Date.now();
  return {
    rows: new Date(now - 30 * 86_400_000).toISOString(),
    history: new Date(now - 3 * 86_400_000).toISOString(),
    events: new Date(now - 60 * 86_400_000).toISOString(),
    eventSpacing: (60 * 86_400) / largest.events,
  };
}
