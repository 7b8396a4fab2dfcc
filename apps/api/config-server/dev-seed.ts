import type { DataSource } from 'typeorm';
import { ConfigLayerRepository, UnitOfWork } from '#database';
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
  await new UnitOfWork(dataSource).run(async (tx) => {
    const layers = new ConfigLayerRepository(dataSource).in(tx);
    const service = await layers.upsert(SERVICE, 'dev-seed');
    await layers.writeProperties(service, SERVICE_PROPERTIES, 'keep-existing');
    const dev = await layers.upsert(SERVICE_DEV, 'dev-seed');
    await layers.writeProperties(dev, DEV_PROPERTIES, 'keep-existing');
    await layers.writeFiles(dev, 'cert', new Map([['server.crt', DEV_CERT]]), 'keep-existing');
    await layers.writeFiles(dev, 'file', new Map([['logback.xml', DEV_FILE]]), 'keep-existing');
  });
}
