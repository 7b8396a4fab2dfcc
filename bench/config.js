// 10. Config read: GET /config-server/configs over four layers (token, binding, merge, ETag) vs raw Fastify
// + pg running the product's own merge statement unauthenticated; then the same with If-None-Match → 304.
import pg from 'pg';
import {
  alternate,
  benchDatabase,
  DIST,
  expectStatuses,
  load,
  log,
  makeIssuer,
  median,
  postgresCpuMicros,
  profileSummary,
  PROFILE,
  row,
  runBenchmark,
  settleStatistics,
  SMOKE,
  startBenchServer,
  startProduct,
  WARM_UP_SECONDS,
} from './lib.js';

const CONNECTIONS = 16;
const ROUNDS = SMOKE ? 1 : 3;
const PROPERTIES_PER_LAYER = 25;
const ADDRESS = 'host=bench-host&serviceId=svc-a&envTag=prod&productId=prod-a&productVersion=1.0';

/** Four layers (product, product+env, service, service+env), overlapping keys so the merge has work. */
async function seed(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const layers = [
    [null, 'prod-a', '1.0', null],
    [null, 'prod-a', '1.0', 'prod'],
    ['svc-a', null, null, null],
    ['svc-a', null, null, 'prod'],
  ];
  for (const [k, [serviceId, productId, productVersion, envTag]] of layers.entries()) {
    const { rows } = await client.query(
      `insert into config_layer (host, service_id, product_id, product_version, env_tag, update_user)
       values ('bench-host', $1, $2, $3, $4, 'bench') returning layer_id`,
      [serviceId, productId, productVersion, envTag],
    );
    // Keys 0..24 shifted by layer: higher layers override some of the lower ones' keys.
    await client.query(
      `insert into config_property (layer_id, property_key, property_value)
       select $1, 'app.key' || (g + $2 * 10), to_jsonb('value ' || g || ' of layer ' || $2)
       from generate_series(0, $3::int - 1) g`,
      [rows[0].layer_id, k, PROPERTIES_PER_LAYER],
    );
  }
  await client.query('analyze');
  await client.end();
}

const SEALED_KEYS = 20;
const WRITE_CONNECTIONS = 8;
const WRITE_LAYERS = 8;

/** The four layers of ADDRESS for `host`, written through an api's admin API (sealed when it has a ring). */
async function seedThrough(base, host, headers) {
  const layers = [
    'productId=prod-a&productVersion=1.0',
    'productId=prod-a&productVersion=1.0&envTag=prod',
    'serviceId=svc-a',
    'serviceId=svc-a&envTag=prod',
  ];
  for (const [k, where] of layers.entries()) {
    const properties = {};
    for (let g = 0; g < SEALED_KEYS; g += 1) properties[`app.key${g + k * 5}`] = `value ${g} of layer ${k}`;
    const res = await fetch(`${base}/config-server/admin/properties?host=${host}&${where}`, {
      method: 'PUT',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({ properties }),
    });
    if (res.status !== 200) throw new Error(`seeding ${host}: ${res.status} ${await res.text()}`);
  }
  return host;
}

await runBenchmark('config', 'GET /config-server/configs (four layers) vs raw Fastify + pg, same merge', async () => {
  const db = await benchDatabase('config');
  await seed(db.url);
  const issuer = await makeIssuer();
  const api = await startProduct('api', { databaseUrl: db.url, issuer });
  const raw = await startBenchServer('config-baseline', 'baseline-config.js', {
    DATABASE_URL: db.url,
    POOL_SIZE: '10',
    DIST,
  });
  // Like for like in the database: the same baseline naming its statement, as Bindery does on a direct connection.
  const rawNamed = await startBenchServer('config-baseline-named', 'baseline-config.js', {
    DATABASE_URL: db.url,
    POOL_SIZE: '10',
    DIST,
    BASELINE_NAMED: '1',
  });
  const token = await issuer.sign({ sub: 'svc-a', scope: 'portal.r', host: 'bench-host', sid: 'svc-a', env: 'prod' });
  const productUrl = `${api.url}/config-server/configs?${ADDRESS}`;
  const rawUrl = `${raw.url}/configs?${ADDRESS}`;
  const rawNamedUrl = `${rawNamed.url}/configs?${ADDRESS}`;
  const auth = { authorization: `Bearer ${token}` };
  const etagOf = async (url, headers) => (await fetch(url, { headers })).headers.get('etag');
  const [productEtag, rawEtag] = [await etagOf(productUrl, auth), await etagOf(rawUrl, {})];
  // With `process`, also its CPU per request (from /proc): it moves far less than req/s on a busy machine.
  const run = (url, headers, status, process) => async () => {
    const before = process?.cpuMicros() ?? 0;
    const result = await load({ url, connections: CONNECTIONS, headers });
    expectStatuses(url, result, [status]);
    return { ...result, cpuPerRequest: ((process?.cpuMicros() ?? 0) - before) / result.total };
  };
  log('warm-up');
  await load({ url: productUrl, connections: 8, duration: WARM_UP_SECONDS, headers: auth });
  await load({ url: rawUrl, connections: 8, duration: WARM_UP_SECONDS });
  await load({ url: rawNamedUrl, connections: 8, duration: WARM_UP_SECONDS });
  const [full, fullBase, fullNamed] = await alternate(
    ROUNDS,
    run(productUrl, auth, 200),
    run(rawUrl, {}, 200),
    run(rawNamedUrl, {}, 200),
  );
  const [cached, cachedBase] = await alternate(
    ROUNDS,
    run(productUrl, { ...auth, 'if-none-match': productEtag }, 304),
    run(rawUrl, { 'if-none-match': rawEtag }, 304),
  );
  // DESIGN 17: the same read of values sealed at rest (the api as shipped) vs the same build without a key ring,
  // both started afresh here, so neither carries the heap and caches of the runs above.
  await api.stop();
  const sealedApi = await startProduct('api', { databaseUrl: db.url, issuer, name: 'api-sealed' });
  const plainApi = await startProduct('api', {
    databaseUrl: db.url,
    issuer,
    name: 'api-plaintext',
    env: { CONFIG_KEYRING_FILE: '', ALLOW_PLAINTEXT_CONFIG: 'true' },
  });
  const admin = { authorization: `Bearer ${await issuer.sign({ sub: 'bench', scope: 'portal.admin' })}` };
  const sealedRead = await seedThrough(sealedApi.url, 'sealed-host', admin);
  const plainRead = await seedThrough(plainApi.url, 'plain-host', admin);
  const readOf = async (base, host) => ({
    url: `${base}/config-server/configs?${ADDRESS.replace('bench-host', host)}`,
    headers: {
      authorization: `Bearer ${await issuer.sign({ sub: 'svc-a', scope: 'portal.r', host, sid: 'svc-a', env: 'prod' })}`,
    },
  });
  const [sealedSide, plainSide] = [await readOf(sealedApi.url, sealedRead), await readOf(plainApi.url, plainRead)];
  await load({ ...sealedSide, connections: 8, duration: WARM_UP_SECONDS });
  await load({ ...plainSide, connections: 8, duration: WARM_UP_SECONDS });
  const [sealedRuns, plainRuns] = await alternate(
    ROUNDS,
    run(sealedSide.url, sealedSide.headers, 200, sealedApi),
    run(plainSide.url, plainSide.headers, 200, plainApi),
  );
  const [sealedEtag, plainEtag] = [
    await etagOf(sealedSide.url, sealedSide.headers),
    await etagOf(plainSide.url, plainSide.headers),
  ];
  const [sealed304, plain304] = await alternate(
    ROUNDS,
    run(sealedSide.url, { ...sealedSide.headers, 'if-none-match': sealedEtag }, 304, sealedApi),
    run(plainSide.url, { ...plainSide.headers, 'if-none-match': plainEtag }, 304, plainApi),
  );
  // The admin write as operators send it: PUT of a layer's SEALED_KEYS properties, one of them new each time.
  const writeOf = (base, host) => {
    let n = 0;
    return {
      url: base,
      headers: { ...admin, 'content-type': 'application/json' },
      requests: [
        {
          method: 'PUT',
          setupRequest: (request) => {
            n += 1;
            const properties = {};
            for (let g = 0; g < SEALED_KEYS - 1; g += 1) properties[`app.key${g}`] = `value ${g}`;
            properties['app.counter'] = n;
            const path = `/config-server/admin/properties?host=${host}&serviceId=svc-w${n % WRITE_LAYERS}&envTag=prod`;
            return { ...request, path, body: JSON.stringify({ properties }) };
          },
        },
      ],
    };
  };
  // Also the api's own CPU per write (from /proc): it moves far less than writes/s on a busy machine.
  const write = (side, process) => async () => {
    const [before, pgBefore] = [process.cpuMicros(), postgresCpuMicros()];
    const result = await load({ ...side, connections: WRITE_CONNECTIONS });
    expectStatuses(side.url, result, [200]);
    const pgPerWrite = (postgresCpuMicros() - pgBefore) / result.total;
    return { ...result, cpuPerWrite: (process.cpuMicros() - before) / result.total, pgPerWrite };
  };
  const [sealedWrite, plainWrite] = [writeOf(sealedApi.url, 'sealed-host'), writeOf(plainApi.url, 'plain-host')];
  await load({ ...sealedWrite, connections: WRITE_CONNECTIONS, duration: WARM_UP_SECONDS });
  await load({ ...plainWrite, connections: WRITE_CONNECTIONS, duration: WARM_UP_SECONDS });
  await settleStatistics(db.url);
  const [sealedWrites, plainWrites] = await alternate(
    ROUNDS,
    write(sealedWrite, sealedApi),
    write(plainWrite, plainApi),
  );
  await plainApi.stop();
  await sealedApi.stop();
  await raw.stop();
  await rawNamed.stop();
  const notes = [
    `Four layers of ${PROPERTIES_PER_LAYER} properties (overlapping keys, 55 after the merge); the baseline runs the ` +
      `product's exported MERGED_PROPERTIES statement, keeps each address's merge with its layer versions as the api ` +
      `does (a repeated read fetches no value), sorts keys and hashes the body for its ETag, ` +
      `without token, binding, validation, problem+json, metrics or logs. ${CONNECTIONS} connections, pool of 10 ` +
      `each, median of ${ROUNDS} alternating run(s). The 304 rows still run the merge on both sides (the ETag is ` +
      `the body's hash). Bindery names its statement (planned once per session); the headline baseline does ` +
      `the same, and the "unnamed" row shows it with pg's default, planned on every request. The sealed rows: ${SEALED_KEYS} keys per layer written through the admin API of ` +
      `the api as shipped (key ring: every value sealed, opened after the merge) and of the same build with ` +
      `ALLOW_PLAINTEXT_CONFIG=true and no ring; each read by the api that wrote it. The write rows: PUT ` +
      `/config-server/admin/properties of ${SEALED_KEYS} keys (one changes every time, so each makes a version), ` +
      `${WRITE_CONNECTIONS} connections over ${WRITE_LAYERS} layers, to each of the same two apis.`,
  ];
  if (PROFILE) notes.push(`api CPU profile, top self time:\n${profileSummary(api).join('\n')}`);
  return {
    rows: [
      // The headline is like for like: the baseline names its statement as Bindery does (issue 40).
      row(
        'throughput GET /config-server/configs / the baseline naming its statement',
        median(full.map((r) => r.rps)),
        median(fullNamed.map((r) => r.rps)),
        'req/s',
        0.8,
      ),
      row(
        'throughput, / the baseline sending its statement unnamed',
        median(full.map((r) => r.rps)),
        median(fullBase.map((r) => r.rps)),
        'req/s',
      ),
      row(
        'throughput with If-None-Match (304)',
        median(cached.map((r) => r.rps)),
        median(cachedBase.map((r) => r.rps)),
        'req/s',
      ),
      row(
        `sealed vs plaintext read (same build, 4 layers x ${SEALED_KEYS} keys)`,
        median(sealedRuns.map((r) => r.rps)),
        median(plainRuns.map((r) => r.rps)),
        'req/s',
        0.8,
      ),
      row(
        'api CPU per read, sealed vs plaintext',
        median(sealedRuns.map((r) => r.cpuPerRequest)),
        median(plainRuns.map((r) => r.cpuPerRequest)),
        'µs',
        undefined,
        { higherIsBetter: false },
      ),
      row(
        `sealed vs plaintext admin write (same build, PUT of ${SEALED_KEYS} keys)`,
        median(sealedWrites.map((r) => r.rps)),
        median(plainWrites.map((r) => r.rps)),
        'writes/s',
        0.8,
      ),
      row(
        'api CPU per admin write, sealed vs plaintext',
        median(sealedWrites.map((r) => r.cpuPerWrite)),
        median(plainWrites.map((r) => r.cpuPerWrite)),
        'µs',
        undefined,
        { higherIsBetter: false },
      ),
      row(
        'PostgreSQL CPU per admin write, sealed vs plaintext',
        median(sealedWrites.map((r) => r.pgPerWrite)),
        median(plainWrites.map((r) => r.pgPerWrite)),
        'µs',
        undefined,
        { higherIsBetter: false },
      ),
      row(
        'sealed vs plaintext, If-None-Match (304)',
        median(sealed304.map((r) => r.rps)),
        median(plain304.map((r) => r.rps)),
        'req/s',
      ),
      row(
        'api CPU per 304, sealed vs plaintext',
        median(sealed304.map((r) => r.cpuPerRequest)),
        median(plain304.map((r) => r.cpuPerRequest)),
        'µs',
        undefined,
        { higherIsBetter: false },
      ),
    ],
    notes,
  };
});
