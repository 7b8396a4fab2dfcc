// 11. Config history's cost: the admin properties write exactly as the api runs it (ConfigAdminService
// .putProperties from dist/: row lock and version, replace, read back, plus the version with its snapshot,
// diff and config.changed event, and the NOTIFY sent after the commit on a control session as the api
// sends it) vs the same write without the history (the same repositories' statements, minus the version,
// the event and the NOTIFY), alternating in one process on one database. Measured below HTTP, so the
// history's share is not diluted by routing, token checks and serialisation.
import { join } from 'node:path';
import { alternate, benchDatabase, DIST, log, median, row, runBenchmark, settleStatistics, SMOKE } from './lib.js';

const ROUNDS = SMOKE ? 1 : 3;
const SECONDS = SMOKE ? 2 : 8;
const WORKERS = 8;
const LAYERS_PER_WORKER = 4;
const PROPERTIES_PER_LAYER = 25;

const database = await import(join(DIST, 'libs/database/index.js'));
const { ConfigAdminService } = await import(join(DIST, 'apps/api/config-server/config-admin.service.js'));
const { LayerReader } = await import(join(DIST, 'apps/api/config-server/layer-reader.js'));
const { LayerWriter } = await import(join(DIST, 'apps/api/config-server/layer-writer.js'));
const { ConfigVault } = await import(join(DIST, 'apps/api/config-server/encryption/config-vault.js'));
const { ConfigKeys, parseKeyRing } = await import(join(DIST, 'apps/api/config-server/encryption/index.js'));
const { randomBytes } = await import('node:crypto');
const { DataSource } = await import('typeorm');

const address = (worker, layer, side) => ({
  host: 'bench-host',
  serviceId: `svc-${side}-${worker}-${layer}`,
  productId: null,
  productVersion: null,
  envTag: 'prod',
});

/** 25 properties, one of which changes with every write (so each version has something to diff). */
const propertiesOf = (n) => {
  const properties = {};
  for (let k = 0; k < PROPERTIES_PER_LAYER; k += 1) properties[`app.key${k}`] = `value ${k}`;
  properties['app.counter'] = n;
  return properties;
};

/** `WORKERS` writers, each cycling over its own layers, for `SECONDS`; answers writes per second. */
async function measure(write) {
  let writes = 0;
  const deadline = Date.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: WORKERS }, async (_, worker) => {
      for (let n = 0; Date.now() < deadline; n += 1) {
        await write(worker, n % LAYERS_PER_WORKER, n);
        writes += 1;
      }
    }),
  );
  return { rps: writes / SECONDS };
}

await runBenchmark(
  'config-history',
  'config write with history (version, diff, NOTIFY, event) vs without',
  async () => {
    const db = await benchDatabase('confighistory');
    const source = new DataSource(database.dataSourceOptions({ url: db.url, poolSize: 10 }));
    await source.initialize();
    // As in the api: the NOTIFY goes out on the process's control session once the write committed.
    const session = new database.ControlSession(db.url, 'bench-control');
    const work = new database.UnitOfWork(source);
    const layers = new database.ConfigLayerRepository(source);
    const history = new database.ConfigHistoryRepository(source, session);
    const store = new database.ConfigStoreRepository(source);
    // The api as shipped (values sealed, DESIGN 17), and the same build without a key ring (plaintext).
    const adminWith = (keys) => {
      const vault = new ConfigVault(keys, new database.ConfigKeyRepository(source));
      const reader = new LayerReader(store, history, vault);
      // CONFIG_HISTORY_MAX_VERSIONS at its default: the layers pass it, so writes prune their oldest version.
      const writer = new LayerWriter(layers, history, store, reader, vault, 1000);
      return new ConfigAdminService(work, layers, reader, writer);
    };
    const sealedAdmin = adminWith(new ConfigKeys(parseKeyRing(`bench: ${randomBytes(32).toString('base64')}\n`)));
    const admin = adminWith(new ConfigKeys(null, undefined));
    const author = { actor: 'bench', reason: 'bench write' };
    // Each layer also holds a 2 KiB cert, so every version hashes and keeps a file too.
    const cert = new Map([['server.crt', Buffer.alloc(2048, 7)]]);
    for (const side of ['sealed', 'with', 'without']) {
      for (let worker = 0; worker < WORKERS; worker += 1) {
        for (let layer = 0; layer < LAYERS_PER_WORKER; layer += 1) {
          const writer = side === 'sealed' ? sealedAdmin : admin;
          await writer.putFiles(author, address(worker, layer, side), 'cert', cert, undefined);
        }
      }
    }
    const sealed = (worker, layer, n) =>
      sealedAdmin.putProperties(author, address(worker, layer, 'sealed'), propertiesOf(n), undefined);
    const withHistory = (worker, layer, n) =>
      admin.putProperties(author, address(worker, layer, 'with'), propertiesOf(n), undefined);
    // The write as it ran before history: lock, replace, read the layer back for the answer.
    const withoutHistory = (worker, layer, n) =>
      work.run(async (tx) => {
        const { layerId } = await layers.in(tx).upsertVersioned(address(worker, layer, 'without'), author.actor);
        await layers.in(tx).writeProperties(layerId, propertiesOf(n), 'replace');
        return store.in(tx).properties(layerId, address(worker, layer, 'without'));
      });
    // The least a write without history could do: no read-back, the answer built from the request.
    const bare = (worker, layer, n) =>
      work.run(async (tx) => {
        const { layerId } = await layers.in(tx).upsertVersioned(address(worker, layer, 'without'), author.actor);
        await layers.in(tx).writeProperties(layerId, propertiesOf(n), 'replace');
      });
    log('warm-up');
    await measure(sealed);
    await measure(withHistory);
    await measure(withoutHistory);
    await measure(bare);
    await settleStatistics(db.url);
    const [on, off, least, sealedOn] = await alternate(
      ROUNDS,
      () => measure(withHistory),
      () => measure(withoutHistory),
      () => measure(bare),
      () => measure(sealed),
    );
    await session.close();
    await source.destroy();
    return {
      rows: [
        row(
          'admin properties write, history on vs off',
          median(on.map((r) => r.rps)),
          median(off.map((r) => r.rps)),
          'writes/s',
          0.85,
        ),
        row(
          'admin properties write, sealed vs plaintext (both with history)',
          median(sealedOn.map((r) => r.rps)),
          median(on.map((r) => r.rps)),
          'writes/s',
          0.8,
        ),
        row(
          'the same, vs without history and without the read-back',
          median(on.map((r) => r.rps)),
          median(least.map((r) => r.rps)),
          'writes/s',
        ),
      ],
      notes: [
        `${WORKERS} concurrent writers over ${WORKERS * LAYERS_PER_WORKER} layers of ${PROPERTIES_PER_LAYER} ` +
          `properties and one 2 KiB cert, one key changing per write; pool of 10; ${SECONDS} s per run, median of ` +
          `${ROUNDS} alternating run(s). With history each write also appends the version (snapshot of properties ` +
          'and file hashes/contents, diff against the previous version) and the config.changed event, and ' +
          'answers once its NOTIFY was sent (after the commit, on the control session). Without history: the ' +
          'write as it ran before DESIGN 14 (row lock and version, replace, the layer read back for the answer); ' +
          'the third row leaves the read-back out too. Sealed: the same build with a key ring (DESIGN 17: the ' +
          "current content opened for the diff, every value sealed under the version's new data key); the " +
          'other rows run it without one (plaintext).',
      ],
    };
  },
);
