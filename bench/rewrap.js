// 13. Key rotation (DESIGN 17): `KeyRotation.rewrap` from dist/ re-wrapping the data keys of 10,000 layer
// versions under a new kid, timed; the baseline is unwrapping and wrapping the same keys in memory alone
// (the crypto without the database), measured in the same run.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { benchDatabase, DIST, fact, log, round, row, runBenchmark, SMOKE } from './lib.js';

const VERSIONS = SMOKE ? 1_000 : 10_000;

const database = await import(join(DIST, 'libs/database/index.js'));
const encryption = await import(join(DIST, 'apps/api/config-server/encryption/index.js'));
const { KeyRotation } = await import(join(DIST, 'apps/api/config-server/encryption/key-rotation.js'));
const { DataSource } = await import('typeorm');

const OLD = `old: ${randomBytes(32).toString('base64')}`;
const NEW = `new: ${randomBytes(32).toString('base64')}`;

await runBenchmark('rewrap', `keys:rewrap of ${VERSIONS} layer versions' data keys`, async () => {
  const db = await benchDatabase('rewrap');
  const source = new DataSource(database.dataSourceOptions({ url: db.url, poolSize: 4 }));
  await source.initialize();
  const oldRing = encryption.parseKeyRing(`${OLD}\n`);
  const wrapped = Array.from({ length: VERSIONS }, () => encryption.wrapDataKey(oldRing, encryption.newDataKey()));
  const keys = new database.ConfigKeyRepository(source);
  for (let i = 0; i < wrapped.length; i += 1000) await keys.insert(wrapped.slice(i, i + 1000));
  const both = encryption.parseKeyRing(`${NEW}\n${OLD}\n`);
  log('in memory');
  const memoryStart = process.hrtime.bigint();
  for (const w of wrapped) encryption.wrapDataKey(both, encryption.unwrapDataKey(both, w));
  const memoryMs = Number(process.hrtime.bigint() - memoryStart) / 1e6;
  log('rewrap');
  const rotation = new KeyRotation(new encryption.ConfigKeys(both), keys, new database.UnitOfWork(source));
  const start = process.hrtime.bigint();
  const { rewrapped } = await rotation.rewrap();
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (rewrapped !== VERSIONS) throw new Error(`rewrapped ${rewrapped} of ${VERSIONS}`);
  await source.destroy();
  return {
    rows: [
      fact(`keys:rewrap of ${VERSIONS} data keys`, round(ms), 'ms'),
      row(
        'rewrap with the database vs the crypto alone',
        VERSIONS / (ms / 1000),
        VERSIONS / (memoryMs / 1000),
        'keys/s',
      ),
    ],
    notes: [
      `${VERSIONS} data keys wrapped under kid "old" (one per layer version), re-wrapped under "new" in batches of ` +
        `500 per transaction (select for update skip locked, one update from unnest). The baseline does the same ` +
        `unwrap and wrap in memory only; the difference is the database's share.`,
    ],
  };
});
