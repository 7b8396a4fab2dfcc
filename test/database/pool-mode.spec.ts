import { afterEach, describe, expect, it } from '@jest/globals';
import { call, startApi, unique, type TestApi } from '../support/api.js';
import { PgWireProxy } from '../support/pg-wire-proxy.js';
import { run } from '../support/processes.js';
import { callers, ISSUER, writeJwksFile } from '../support/tokens.js';

/** DESIGN 15: DATABASE_POOL_MODE is declared by the operator; the wire shows what each mode sends. */
const url = (): string => process.env.DATABASE_URL ?? '';
const sessionUrl = (): string => process.env.DATABASE_SESSION_URL || url();
const endpoint = (u: string): { host: string; port: number } => {
  const parsed = new URL(u);
  return { host: parsed.hostname, port: Number(parsed.port || 5432) };
};

let proxy: PgWireProxy | undefined;
let api: TestApi | undefined;
afterEach(async () => {
  await api?.close();
  await proxy?.close();
  api = proxy = undefined;
});

/** Hot reads and writes the pool path serves: a tag created, read a few times, listed. */
async function traffic(app: TestApi): Promise<void> {
  const admin = await callers.admin();
  const created = await call(app, 'POST', '/tags', { token: admin, body: { tagName: unique('wire') } });
  expect(created.statusCode).toBe(201);
  const { tagId } = created.json<{ tagId: string }>();
  for (let i = 0; i < 3; i += 1)
    expect((await call(app, 'GET', `/tags/${tagId}`, { token: admin })).statusCode).toBe(200);
  expect((await call(app, 'GET', '/tags?limit=5', { token: admin })).statusCode).toBe(200);
}

describe('DATABASE_POOL_MODE at the wire', () => {
  it('transaction: no named statement reaches DATABASE_URL (the pooler in CI)', async () => {
    proxy = await PgWireProxy.start(endpoint(url()));
    api = await startApi({
      DATABASE_URL: proxy.urlFor(url()),
      DATABASE_SESSION_URL: sessionUrl(),
      DATABASE_POOL_MODE: 'transaction',
      DB_POOL_SIZE: '2',
    });
    await traffic(api);
    expect(proxy.parsed.length).toBeGreaterThan(0);
    expect(proxy.named).toEqual([]);
  });

  it('session (the default): the hot reads are named, so the proxy above can see a name', async () => {
    proxy = await PgWireProxy.start(endpoint(sessionUrl()));
    api = await startApi({
      DATABASE_URL: proxy.urlFor(sessionUrl()),
      DATABASE_SESSION_URL: sessionUrl(),
      DATABASE_POOL_MODE: '',
      DB_POOL_SIZE: '2',
    });
    await traffic(api);
    expect(proxy.named.length).toBeGreaterThan(0);
    expect(proxy.named.every((name) => name.startsWith('bindery_'))).toBe(true);
  });
});

describe('DATABASE_POOL_MODE=transaction without a session of its own', () => {
  it.each([
    ['apps/api/main.js', 'unset'],
    ['apps/api/main.js', 'the pooler itself'],
    ['apps/controller/main.js', 'unset'],
  ])('%s refuses to start when DATABASE_SESSION_URL is %s, naming it', async (entry, session) => {
    const started = run(entry, [], {
      DATABASE_URL: url(),
      DATABASE_SESSION_URL: session === 'unset' ? '' : url(),
      DATABASE_POOL_MODE: 'transaction',
      LISTEN_HOST: '127.0.0.1',
      API_PORT: '0',
      CONTROLLER_PORT: '0',
      JWT_JWKS_FILE: writeJwksFile(),
      JWT_ISSUER: ISSUER,
      CONTROLLER_HOST_ID: 'h-ctl',
    });
    expect(await started.exit()).not.toBe(0);
    expect(started.output()).toMatch(/Invalid setting DATABASE_POOL_MODE: transaction needs DATABASE_SESSION_URL/);
  });
});
