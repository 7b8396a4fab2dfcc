import 'reflect-metadata';
import { DataSource } from 'typeorm';
import {
  ConfigKeyRepository,
  dataSourceOptions,
  resolveDatabase,
  runMigrations,
  scriptDatabase,
  UnitOfWork,
} from '#database';
import { loadSettings, SettingsError } from '#platform';
import { configKeysFor } from '../apps/api/config-server/encryption/config-keys.js';
import { encryptExisting } from '../apps/api/config-server/encryption/encrypt-existing.js';
import { KeyRingError } from '../apps/api/config-server/encryption/errors.js';
import { KeyRotation } from '../apps/api/config-server/encryption/key-rotation.js';
import { count, parseCommandLine, refuseUsage } from './usage.js';

const USAGE = `usage: npm run keys:rewrap
       npm run keys:encrypt-existing

Config values at rest (DESIGN 17, docs/config-server.md), with the api's settings (CONFIG_KEYRING_FILE,
DATABASE_URL, else the embedded server under BINDERY_DATA_DIR):
  keys:rewrap            re-wraps every data key under the key ring's active (first) kid; values, versions,
                         ETags and pushes are untouched. Resumable: run it again after a stop.
  keys:encrypt-existing  once every process runs this release: turns encrypted writes on, then seals every
                         plaintext layer and version. Idempotent and resumable.`;

const COMMANDS = ['rewrap', 'encrypt-existing'] as const;

async function main(argv: readonly string[]): Promise<void> {
  // npm run keys:rewrap runs `keys.js rewrap`: the sub-command names the script in every line.
  const name = COMMANDS.some((c) => c === argv[0]) ? `keys:${argv[0]}` : 'keys';
  const { positionals } = parseCommandLine({ name, usage: USAGE, options: {}, positionals: true }, argv);
  const command = COMMANDS.find((c) => c === positionals[0]);
  if (command === undefined) refuseUsage({ name, usage: USAGE }, `give one command: ${COMMANDS.join(' or ')}`);
  if (positionals.length > 1) refuseUsage({ name, usage: USAGE }, `Unexpected argument '${positionals[1]}'`);
  const settings = loadSettings();
  const keys = await configKeysFor(settings);
  const database = await resolveDatabase(settings);
  const dataSource = new DataSource(
    dataSourceOptions({ ...scriptDatabase(settings, database.url), poolSize: 2, applicationName: `bindery-keys` }),
  );
  try {
    await dataSource.initialize();
    await runMigrations(dataSource);
    if (command === 'rewrap') {
      const rotation = new KeyRotation(keys, new ConfigKeyRepository(dataSource), new UnitOfWork(dataSource));
      const { kid, rewrapped } = await rotation.rewrap();
      process.stdout.write(
        `keys:rewrap: ${count(rewrapped, 'data key')} re-wrapped; every data key is under kid "${kid}"\n`,
      );
      return;
    }
    const summary = await encryptExisting(dataSource, keys);
    const left = await new ConfigKeyRepository(dataSource).plaintextRows();
    process.stdout.write(
      `keys:encrypt-existing: encrypted writes on; sealed ${count(summary.layers, 'layer')} and ` +
        `${count(summary.versions, 'version')}; ${count(left.properties + left.files + left.versions, 'plaintext row')} left\n`,
    );
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await database.stop();
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const known = error instanceof SettingsError || error instanceof KeyRingError;
  process.stderr.write(`keys:${process.argv[2] ?? ''}: ${known ? '' : 'failed: '}${(error as Error).message}\n`);
  process.exit(1);
});
