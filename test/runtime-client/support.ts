import { operatorPrincipal } from '#token-binding';
import { expect } from '@jest/globals';
import { migrate } from '#database';
import { ClientsService } from '../../apps/api/token-issuer/clients.service.js';
import { listenApi, type ListeningApi } from '../support/api.js';
import { RegistryTable } from '../support/controller.js';
import { freePort, startBuilt, type Spawned } from '../support/processes.js';
import { ISSUER, writeIssuerKeyFile } from '../support/tokens.js';

/** The api's settings with its built-in issuer (a key file of the test's own, no JWKS file). */
export const issuerEnv = (): Record<string, string> => ({
  JWT_JWKS_FILE: '',
  TOKEN_ISSUER_KEY_FILE: writeIssuerKeyFile().file,
  JWT_ISSUER: ISSUER,
});

/**
 * The runtime side against real processes: the api with its issuer (in-process, listening) and the built
 * controller of `host` trusting only the api's JWKS, as in docker-compose.issuer.yml (it holds no private
 * key); a client record for `serviceId` in prod with portal.r, and an admin token from the issuer.
 */
export interface IssuerWorld {
  readonly api: ListeningApi;
  readonly env: Record<string, string>;
  readonly controllerUrl: string;
  readonly table: RegistryTable;
  readonly clientId: string;
  readonly secret: string;
  readonly adminToken: string;
  /** The controller process now running (replaced by `restartController`). */
  controller(): Spawned;
  /** Starts the controller again on the same port, after a test stopped it. */
  restartController(): Promise<Spawned>;
  /** Replaces one of `host`'s layers' properties through the admin API, as an operator does. */
  putLayer(address: Record<string, string>, properties: Record<string, unknown>): Promise<void>;
  close(): Promise<void>;
}

export async function startIssuerWorld(host: string, serviceId: string): Promise<IssuerWorld> {
  await migrate(process.env.DATABASE_SESSION_URL || (process.env.DATABASE_URL ?? ''));
  const env = issuerEnv();
  const api = await listenApi(env);
  const port = await freePort();
  const startController = () =>
    startBuilt('apps/controller/main.js', port, {
      JWT_JWKS_FILE: '',
      JWT_JWKS_URI: `${api.url}/.well-known/jwks.json`,
      JWT_ISSUER: ISSUER,
      CONTROLLER_PORT: String(port),
      CONTROLLER_HOST_ID: host,
    });
  let controller = await startController();
  const table = new RegistryTable();
  const operator = operatorPrincipal('test');
  const clients = api.app.get(ClientsService);
  const runtime = await clients.create(operator, { host, sid: serviceId, envs: ['prod'], scopes: ['portal.r'] });
  const admin = await clients.create(operator, { scopes: ['portal.admin'], envs: [] });
  const basic = Buffer.from(`${admin.clientId}:${admin.clientSecret}`).toString('base64');
  const issued = await fetch(`${api.url}/oauth2/token`, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials' }).toString(),
  });
  const adminToken = ((await issued.json()) as { access_token: string }).access_token;
  return {
    api,
    env,
    controllerUrl: `ws://127.0.0.1:${port}`,
    table,
    clientId: runtime.clientId,
    secret: runtime.clientSecret,
    adminToken,
    controller: () => controller,
    async restartController() {
      controller = await startController();
      return controller;
    },
    async putLayer(address, properties) {
      const query = new URLSearchParams({ host, ...address });
      const put = await fetch(`${api.url}/config-server/admin/properties?${query.toString()}`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ properties }),
      });
      expect(put.status).toBe(200);
    },
    async close() {
      controller.child.kill('SIGKILL');
      await controller.exit();
      await api.close();
      await table.end();
    },
  };
}
