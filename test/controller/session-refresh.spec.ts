import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { instanceIdOf, RegistryTable, RpcClient, startController, type TestController } from '../support/controller.js';
import { UpgradeRefused } from '../support/rpc-client.js';
import { token } from '../support/tokens.js';
import { waitFor } from '../support/wait.js';

// DESIGN 8: a socket whose token expired more than WS_TOKEN_GRACE_MS ago is closed 1008, unless it sent
// session/refresh with a new token of the same sid, host and env.
describe('token lifetime on the socket', () => {
  let ctl: TestController;
  let table: RegistryTable;
  beforeAll(async () => {
    ctl = await startController({ WS_TOKEN_GRACE_MS: '300' });
    table = new RegistryTable();
  });
  afterAll(async () => {
    await ctl.close();
    await table.end();
  });

  const runtime = (sid: string, expiresIn: number, extra: Record<string, unknown> = {}) =>
    token({ sid, host: ctl.hostId, env: 'prod', ...extra }, { expiresIn });

  // `exp` has whole seconds, so a token of n s lives n-1 to n s: 3 s leaves a loaded machine time to register.
  it('closes an expired, unrefreshed socket with 1008 and disconnects its instance', async () => {
    const client = await RpcClient.connect(ctl.wsUrl, { token: await runtime('svc-exp', 3) });
    const id = instanceIdOf(await client.call('service/register', { serviceId: 'svc-exp', envTag: 'prod' }));
    expect(await client.waitClosed()).toEqual({ code: 1008, reason: 'Token expired' });
    await ctl.quiesce();
    expect((await table.byId(id))?.status).toBe('disconnected');
  });

  it('keeps a refreshed socket registered across several token lifetimes', async () => {
    // Tokens of 3 s then 4 s (exp has whole seconds), each replaced at once; the last lives a minute.
    const client = await RpcClient.connect(ctl.wsUrl, { token: await runtime('svc-ref', 3) });
    const id = instanceIdOf(await client.call('service/register', { serviceId: 'svc-ref', envTag: 'prod' }));
    for (const lifetime of [4, 60]) {
      const refreshed = await client.call('session/refresh', { jwt: await runtime('svc-ref', lifetime) });
      expect(refreshed.result).toMatchObject({ status: 'refreshed', exp: expect.any(Number) });
    }
    // A witness whose 4 s token was issued last: once it is closed, both replaced tokens' deadlines have passed.
    const witness = await RpcClient.connect(ctl.wsUrl, { token: await runtime('svc-ref', 4) });
    expect(await witness.waitClosed()).toEqual({ code: 1008, reason: 'Token expired' });
    // Calls act with the refreshed token, on a socket that was never closed (frames keep their order).
    expect((await client.call('discovery/lookup', { serviceId: 'svc-ref', envTag: 'prod' })).result).toBeDefined();
    expect(client.socket.readyState).toBe(client.socket.OPEN);
    expect((await table.byId(id))?.status).toBe('connected');
    await client.close();
  });

  it("closes a refreshed socket once the new token's own lifetime is over", async () => {
    const client = await RpcClient.connect(ctl.wsUrl, { token: await runtime('svc-short', 60) });
    instanceIdOf(await client.call('service/register', { serviceId: 'svc-short', envTag: 'prod' }));
    expect((await client.call('session/refresh', { jwt: await runtime('svc-short', 3) })).result).toBeDefined();
    expect(await client.waitClosed()).toEqual({ code: 1008, reason: 'Token expired' });
  });

  it.each([
    ['another sid', { sid: 'other' }, -32003, "Refresh token sid does not match the socket's token"],
    ['another env', { env: 'dev' }, -32003, "Refresh token env does not match the socket's token"],
    ['a token that fails verification', { bad: true }, -32001, 'Unauthorized'],
  ] as const)('refuses a refresh with %s and closes 1008', async (_, change, code, reason) => {
    const client = await RpcClient.connect(ctl.wsUrl, { token: await runtime('svc-bad', 60) });
    instanceIdOf(await client.call('service/register', { serviceId: 'svc-bad', envTag: 'prod' }));
    const jwt = 'bad' in change ? 'not.a.token' : await runtime('sid' in change ? change.sid : 'svc-bad', 60, change);
    const answer = await client.call('session/refresh', { jwt });
    expect(answer.error).toMatchObject({ code, message: reason });
    expect(await client.waitClosed()).toEqual({ code: 1008, reason });
  });

  it('a refresh on a socket without a token is -32001 and closes', async () => {
    const client = await RpcClient.connect(ctl.wsUrl);
    const answer = await client.call('session/refresh', { jwt: await runtime('svc-none', 60) });
    expect(answer.error).toMatchObject({ code: -32001 });
    expect(await client.waitClosed()).toEqual({ code: 1008, reason: 'Unauthorized' });
  });
});

// DESIGN 8: the socket's token is verified once; within WS_TOKEN_GRACE_MS after its exp the socket still acts
// with it (so a runtime has time to refresh), although a new upgrade with that token is refused by then.
describe('a socket within the grace period after its token expired', () => {
  let ctl: TestController;
  beforeAll(async () => {
    ctl = await startController({ JWT_CLOCK_TOLERANCE_SEC: '1' });
  });
  afterAll(() => ctl.close());

  /** Whether an upgrade with `jwt` is refused 401: the verifier itself holds the token expired. */
  const refusedAtUpgrade = async (jwt: string): Promise<boolean> => {
    try {
      await (await RpcClient.connect(ctl.wsUrl, { token: jwt })).close();
      return false;
    } catch (error) {
      if (error instanceof UpgradeRefused && error.status === 401) return true;
      throw error;
    }
  };

  it('answers its calls with the token it verified, and a refresh keeps it going', async () => {
    const jwt = await token({ sid: 'svc-grace', host: ctl.hostId, env: 'prod' }, { expiresIn: 3 });
    const client = await RpcClient.connect(ctl.wsUrl, { token: jwt });
    const id = instanceIdOf(await client.call('service/register', { serviceId: 'svc-grace', envTag: 'prod' }));
    await waitFor(() => refusedAtUpgrade(jwt), 'the token to be refused at the upgrade', 10_000, 100);

    const lookup = await client.call('discovery/lookup', { serviceId: 'svc-grace', envTag: 'prod' });
    expect(lookup.result).toMatchObject({
      serviceId: 'svc-grace',
      nodes: [expect.objectContaining({ runtimeInstanceId: id })],
    });
    const fresh = await token({ sid: 'svc-grace', host: ctl.hostId, env: 'prod' }, { expiresIn: 60 });
    expect((await client.call('session/refresh', { jwt: fresh })).result).toMatchObject({ status: 'refreshed' });
    expect(client.socket.readyState).toBe(client.socket.OPEN);
    await client.close();
  });
});
