import { join } from 'node:path';
import { startEmbeddedPostgres } from './embedded.js';

export interface ResolvedDatabase {
  readonly url: string;
  readonly stop: () => Promise<void>;
}

/** `DATABASE_URL` when set; otherwise the embedded PostgreSQL under `<dataDir>/postgres` (DESIGN 2). */
export async function resolveDatabase(settings: {
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  readonly embeddedPostgresPort: number;
}): Promise<ResolvedDatabase> {
  if (settings.databaseUrl !== undefined) return { url: settings.databaseUrl, stop: async () => {} };
  return startEmbeddedPostgres({ dir: join(settings.dataDir, 'postgres'), port: settings.embeddedPostgresPort });
}
