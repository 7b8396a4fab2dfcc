import type { DataSource } from 'typeorm';
import { OAuthClientRepository } from '#database';
import { generateSecret, hashSecret } from './client-secrets.js';

export const DEV_CLIENT_ID = 'petstore-dev';

export interface DevClient {
  readonly clientId: string;
  readonly clientSecret: string;
}

/**
 * `npm start`'s runtime client (dev mode only): host `hostId`, sid petstore, env dev, scope portal.r.
 * Its secret is shown once, so each start gives it a new one (the old one stops working) and prints that.
 */
export async function ensureDevClient(db: DataSource, hostId: string): Promise<DevClient> {
  const clients = new OAuthClientRepository(db);
  const clientSecret = generateSecret();
  const secretHash = await hashSecret(clientSecret);
  const rotated = await clients.rotateSecret(DEV_CLIENT_ID, secretHash, 0, 'npm start');
  if (rotated === null) {
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
  }
  return { clientId: DEV_CLIENT_ID, clientSecret };
}
