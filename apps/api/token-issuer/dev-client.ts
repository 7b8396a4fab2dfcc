import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DataSource } from 'typeorm';
import { OAuthClientRepository } from '#database';
import { generateSecret, hashSecret, secretMatches } from './client-secrets.js';

export const DEV_CLIENT_ID = 'petstore-dev';
/** The dev client's secret under the data dir (as the dev key is), readable by its owner only. */
export const DEV_CLIENT_SECRET_FILE = join('dev-clients', 'petstore-dev.secret');

export interface DevClient {
  readonly clientId: string;
  readonly clientSecret: string;
  /** What this start did to the record: a running `example:runtime` keeps working unless it is `rotated`. */
  readonly outcome: 'kept' | 'created' | 'rotated';
}

/**
 * `npm start`'s runtime client (dev mode only): host `hostId`, sid petstore, env dev, scope portal.r. Its
 * secret is made once and kept in the data dir, so a restart does not break a runtime using it. A record
 * that no longer takes the kept secret (an operator rotated it) gets a new one, kept in its place.
 */
export async function ensureDevClient(db: DataSource, hostId: string, dataDir: string): Promise<DevClient> {
  const clients = new OAuthClientRepository(db);
  const file = join(dataDir, DEV_CLIENT_SECRET_FILE);
  let clientSecret = await readSecret(file);
  const existing = await clients.find(DEV_CLIENT_ID);
  if (existing !== null && clientSecret !== undefined && (await secretMatches(clientSecret, existing.secretHash))) {
    return { clientId: DEV_CLIENT_ID, clientSecret, outcome: 'kept' };
  }
  if (existing !== null || clientSecret === undefined) {
    clientSecret = generateSecret();
    await keepSecret(file, clientSecret);
  }
  const secretHash = await hashSecret(clientSecret);
  const rotated = await clients.rotateSecret(DEV_CLIENT_ID, secretHash, 0, 'npm start', 'all');
  if (rotated !== null) return { clientId: DEV_CLIENT_ID, clientSecret, outcome: 'rotated' };
  await clients.create({
    clientId: DEV_CLIENT_ID,
    description: 'the dev runtime of npm start',
    host: hostId,
    sid: 'petstore',
    envs: ['dev'],
    scopes: ['portal.r'],
    secretHash,
    updateUser: 'npm start',
  });
  return { clientId: DEV_CLIENT_ID, clientSecret, outcome: 'created' };
}

async function readSecret(file: string): Promise<string | undefined> {
  try {
    const text = (await readFile(file, 'utf8')).trim();
    return text === '' ? undefined : text;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** Written whole to a private temporary file, then renamed into place: a reader never sees half a secret. */
async function keepSecret(file: string, secret: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temporary, `${secret}\n`, { mode: 0o600 });
  await rename(temporary, file);
}
