import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DataSource } from 'typeorm';
import { ConfigLayerRepository, UnitOfWork } from '#database';
import { KEPT_VERSIONS } from '#platform';
import type { JsonValue } from './config-values.js';
import type { ConfigKeys } from './encryption/config-keys.js';
import { layerWriterFor } from './layer-writer.js';
import type { LayerAddress } from './layer-address.js';

export const DEV_SEED_HOST = 'dev-host';
export const DEV_SEED_SERVICE_ID = 'petstore';
export const DEV_SEED_ENV_TAG = 'dev';

const SERVICE: LayerAddress = {
  host: DEV_SEED_HOST,
  serviceId: DEV_SEED_SERVICE_ID,
  productId: null,
  productVersion: null,
  envTag: null,
};
const SERVICE_DEV: LayerAddress = { ...SERVICE, envTag: DEV_SEED_ENV_TAG };

/** Service layer (every environment): overridden per key by the dev layer below. */
const SERVICE_PROPERTIES: Record<string, JsonValue> = {
  'server.httpPort': 8080,
  'server.enableHttps': false,
  'petstore.greeting': 'hello from bindery',
  'petstore.pageSize': 20,
};

const DEV_PROPERTIES: Record<string, JsonValue> = {
  'server.httpPort': 8443,
  'server.enableHttps': true,
  'petstore.greeting': 'hello from the dev environment',
  'petstore.allowedOrigins': ['http://localhost:3000'],
  'client.timeout': { connectMs: 2000, readMs: 5000 },
};

const DEV_CERT = Buffer.from(
  '-----BEGIN CERTIFICATE-----\n' +
    `${Buffer.from('bindery dev example, not a real certificate').toString('base64')}\n` +
    '-----END CERTIFICATE-----\n',
);

const DEV_FILE = Buffer.from(
  '<configuration>\n  <root level="INFO"><appender-ref ref="STDOUT"/></root>\n</configuration>\n',
);

/** Where `npm start` records the databases it has seeded: one line each, so it seeds a database once. */
export const DEV_SEED_MARKER = 'dev-seed.done';

export type DevSeedOutcome = 'seeded' | 'already-seeded' | 'layers-exist';

/**
 * Writes a small example for `dev-host` / `petstore` / `dev` (a service layer, a dev layer, one cert,
 * one file) so the runtime token printed by `npm start` reads a real configuration. Once per database:
 * `<dataDir>/dev-seed.done` names the databases seeded, and a database that already holds either layer
 * (seeded before the marker existed, or written by an operator) is recorded without a write. So a key,
 * file or layer an operator removed stays removed across restarts. Needs the migrations applied.
 */
export async function seedDevConfig(
  dataSource: DataSource,
  dataDir: string,
  keys: ConfigKeys,
): Promise<DevSeedOutcome> {
  const marker = join(dataDir, DEV_SEED_MARKER);
  const database = await databaseIdentity(dataSource);
  const seeded = await readFile(marker, 'utf8').then(
    (text) => text.split('\n'),
    (error: NodeJS.ErrnoException): string[] => {
      if (error.code === 'ENOENT') return [];
      throw error;
    },
  );
  if (seeded.includes(database)) return 'already-seeded';
  const outcome = await new UnitOfWork(dataSource).run(async (tx): Promise<DevSeedOutcome> => {
    const layers = new ConfigLayerRepository(dataSource).in(tx);
    if ((await layers.find(SERVICE)) !== null || (await layers.find(SERVICE_DEV)) !== null) return 'layers-exist';
    // The seed writes layers' first versions only, which no cap prunes.
    const writer = layerWriterFor(dataSource, keys, KEPT_VERSIONS);
    const author = { actor: 'dev-seed', reason: 'example configuration of npm start' };
    const service = await layers.upsertVersioned(SERVICE, 'dev-seed');
    await writer.write(
      tx,
      { ...service, address: SERVICE },
      [{ properties: SERVICE_PROPERTIES, mode: 'replace' }],
      author,
    );
    const dev = await layers.upsertVersioned(SERVICE_DEV, 'dev-seed');
    await writer.write(
      tx,
      { ...dev, address: SERVICE_DEV },
      [
        { properties: DEV_PROPERTIES, mode: 'replace' },
        { kind: 'cert', files: new Map([['server.crt', DEV_CERT]]), mode: 'replace' },
        { kind: 'file', files: new Map([['logback.xml', DEV_FILE]]), mode: 'replace' },
      ],
      author,
    );
    return 'seeded';
  });
  await mkdir(dataDir, { recursive: true });
  await appendFile(marker, `${database}\n`);
  return outcome;
}

/** The cluster's system identifier and the database's oid: a recreated database is a new one. */
async function databaseIdentity(dataSource: DataSource): Promise<string> {
  const rows = await dataSource.query<{ id: string }[]>(
    `select (select system_identifier from pg_control_system())::text || '/' || d.oid::text as id
       from pg_database d where d.datname = current_database()`,
  );
  const id = rows[0]?.id;
  if (id === undefined) throw new Error('the current database is not in pg_database');
  return id;
}
