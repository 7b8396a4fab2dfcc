import 'reflect-metadata';
import { migrate, resolveDatabase } from '#database';
import { loadSettings, SettingsError } from '#platform';

/** `npm run migration:run`: applies pending migrations to DATABASE_URL (or the embedded server). */
try {
  const settings = loadSettings();
  const database = await resolveDatabase(settings);
  try {
    const applied = await migrate(database.url);
    process.stdout.write(applied.length === 0 ? 'no pending migrations\n' : `applied: ${applied.join(', ')}\n`);
  } finally {
    await database.stop();
  }
} catch (error) {
  process.stderr.write(`migrate: ${error instanceof SettingsError ? error.message : String(error)}\n`);
  process.exit(1);
}
