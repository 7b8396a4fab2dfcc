import { join } from 'node:path';
import { startEmbeddedPostgres } from './embedded.js';

export interface ResolvedDatabase {
  readonly url: string;
  readonly stop: () => Promise<void>;
}

/** `DATABASE_URL` when set; otherwise the embedded PostgreSQL under `<dataDir>/postgres` (DESIGN 2). */
export async function resolveDatabase(databaseUrl: string | undefined, dataDir: string): Promise<ResolvedDatabase> {
  if (databaseUrl !== undefined) return { url: databaseUrl, stop: async () => {} };
  return startEmbeddedPostgres({ dir: join(dataDir, 'postgres') });
}
