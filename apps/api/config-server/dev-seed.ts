import type { DataSource } from 'typeorm';
import { upsertLayer, writeFiles, writeProperties } from './config-store.js';
import type { JsonValue } from './config-values.js';
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

/**
 * Writes a small example for `dev-host` / `petstore` / `dev` (a service layer, a dev layer, one cert,
 * one file) so the runtime token printed by `npm start` reads a real configuration. Idempotent and
 * non-destructive: entries that already exist (edited by hand) are kept. Needs the migrations applied.
 */
export async function seedDevConfig(dataSource: DataSource): Promise<void> {
  await dataSource.transaction(async (tx) => {
    const service = await upsertLayer(tx, SERVICE, 'dev-seed');
    await writeProperties(tx, service, SERVICE_PROPERTIES, 'keep-existing');
    const dev = await upsertLayer(tx, SERVICE_DEV, 'dev-seed');
    await writeProperties(tx, dev, DEV_PROPERTIES, 'keep-existing');
    await writeFiles(tx, dev, 'cert', new Map([['server.crt', DEV_CERT]]), 'keep-existing');
    await writeFiles(tx, dev, 'file', new Map([['logback.xml', DEV_FILE]]), 'keep-existing');
  });
}
