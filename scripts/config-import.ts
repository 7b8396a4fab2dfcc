import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { dataSourceOptions, scriptDatabase, resolveDatabase, runMigrations } from '#database';
import { loadSettings, SettingsError } from '#platform';
import {
  describeLayer,
  IMPORT_USAGE,
  importLayer,
  ImportUsageError,
  parseImportArgs,
  readImport,
} from '../apps/api/config-server/config-import.js';
import { configKeysFor } from '../apps/api/config-server/encryption/config-keys.js';
import { answerHelp, count, refuseUsage } from './usage.js';

const command = { name: 'config:import', usage: IMPORT_USAGE };

/** What the files hold is no usage error: the mistake and where it is, without the usage. */
class ContentError extends Error {}

/** `npm run config:import -- ...`: loads a values.yml and/or a folder of files into one config layer. */
async function main(argv: readonly string[]): Promise<void> {
  answerHelp(IMPORT_USAGE, argv);
  // The command line (parseArgs, strict): a mistake in it is a usage error.
  const plan = await parseImportArgs(argv).catch((error: unknown) => {
    if (error instanceof ImportUsageError) refuseUsage(command, error.message);
    throw error;
  });
  // Everything is read and checked before the database is opened.
  const contents = await readImport(plan).catch((error: unknown) => {
    throw error instanceof ImportUsageError ? new ContentError(error.message) : error;
  });
  // The same settings as the processes: DATABASE_URL, else the embedded server under BINDERY_DATA_DIR.
  const settings = loadSettings();
  const database = await resolveDatabase(settings);
  const dataSource = new DataSource(
    dataSourceOptions({
      ...scriptDatabase(settings, database.url),
      poolSize: 2,
      applicationName: 'bindery-config-import',
    }),
  );
  try {
    await dataSource.initialize();
    await runMigrations(dataSource);
    const keys = await configKeysFor(settings);
    if (keys.warning !== undefined) process.stderr.write(`config:import: ${keys.warning}\n`);
    const summary = await importLayer(dataSource, plan, contents, keys, settings.configStore.historyMaxVersions);
    const parts = [
      summary.properties === undefined ? undefined : count(summary.properties, 'property', 'properties'),
      summary.files === undefined ? undefined : `${count(summary.files, 'file')} of kind ${plan.kind}`,
    ].filter((p) => p !== undefined);
    const layer = describeLayer(plan.address);
    process.stdout.write(
      summary.unchanged
        ? `config:import: ${parts.join(' and ')} of layer ${layer} unchanged (no new version)\n`
        : `config:import: replaced ${parts.join(' and ')} of layer ${layer}\n`,
    );
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await database.stop();
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof SettingsError || error instanceof ContentError) {
    process.stderr.write(`config:import: ${error.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`config:import: failed: ${(error as Error).message}\n`);
  process.exit(1);
});
