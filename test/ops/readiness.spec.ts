import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { startEmbeddedPostgres, type EmbeddedServer } from '#database';
import { dataDir, freePort } from '../support/processes.js';
import { call, startApi, type TestApi } from '../support/api.js';
import { waitFor } from '../support/wait.js';

let dir: string;
let port: number;
let server: EmbeddedServer;
let api: TestApi;

const start = () => startEmbeddedPostgres({ dir: join(dir, 'pg'), port, database: 'bindery' });

beforeAll(async () => {
  dir = await dataDir();
  port = await freePort();
  server = await start();
  api = await startApi({ DATABASE_URL: server.url });
});

afterAll(async () => {
  await api.close();
  await server.stop();
});

it('readiness fails while the database is down and recovers by itself when it returns', async () => {
  expect((await call(api, 'GET', '/health/ready')).statusCode).toBe(200);
  await server.stop();
  const down = await call(api, 'GET', '/health/ready');
  expect(down.statusCode).toBe(503);
  expect(down.json()).toMatchObject({ status: 503, detail: 'The database is not reachable; retry shortly' });
  expect(down.headers['retry-after']).toBe('2');
  expect((await call(api, 'GET', '/health/live')).statusCode).toBe(200);
  server = await start();
  await waitFor(
    async () => (await call(api, 'GET', '/health/ready')).statusCode === 200,
    'readiness once the database is back',
    15_000,
    200,
  );
}, 60_000);
