import 'reflect-metadata';
import { migrate, resolveDatabase } from '#database';
import { loadSettings, SettingsError } from '#platform';
import { parseCommandLine } from './usage.js';

parseCommandLine({
  name: 'migration:run',
  usage: `usage: npm run migration:run
Applies the pending migrations to DATABASE_URL, else to the embedded PostgreSQL under BINDERY_DATA_DIR
(default .data/), and prints their names. npm start and the api (RUN_MIGRATIONS) do this by themselves.`,
  options: {},
});

/** `npm run migration:run`: applies pending migrations to DATABASE_URL (or the embedded server). */
try {
  const settings = loadSettings();
  const database = await resolveDatabase(settings);
  try {
    const applied = await migrate(settings.databaseSessionUrl ?? database.url);
    process.stdout.write(applied.length === 0 ? 'no pending migrations\n' : `applied: ${applied.join(', ')}\n`);
  } finally {
    await database.stop();
  }
} catch (error) {
  process.stderr.write(`migration:run: ${error instanceof SettingsError ? error.message : String(error)}\n`);
  process.exit(1);
}
