import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  instanceIdOf,
  RpcClient,
  startController,
  UpgradeRefused,
  type TestController,
} from '../support/controller.js';
import { token } from '../support/tokens.js';

const refusal = (work: Promise<unknown>): Promise<number> =>
  work.then(
    () => 0,
    (error: unknown) => (error instanceof UpgradeRefused ? error.status : -1),
  );

// DESIGN 2 and 8: sockets without a token have their own small cap and a deadline; all sockets have a cap.
describe('WS_MAX_UNAUTHENTICATED, WS_MAX_CONNECTIONS and WS_AUTH_TIMEOUT_MS', () => {
  let ctl: TestController;
  beforeAll(async () => {
    ctl = await startController({ WS_MAX_CONNECTIONS: '4', WS_MAX_UNAUTHENTICATED: '2', WS_AUTH_TIMEOUT_MS: '800' });
  });
  afterAll(() => ctl.close());

  const runtimeToken = (sid: string) => token({ sid, host: ctl.hostId });

  it('refuses a third socket without a token with 503, while a socket with a token still gets in', async () => {
    const anonymous = [await RpcClient.connect(ctl.wsUrl), await RpcClient.connect(ctl.wsUrl)];
    expect(await refusal(RpcClient.connect(ctl.wsUrl))).toBe(503);
    const withToken = await RpcClient.connect(ctl.wsUrl, { token: await runtimeToken('svc-lim-a') });
    instanceIdOf(await withToken.call('service/register', { serviceId: 'svc-lim-a' }));
    // A socket that registers with params.jwt frees its unauthenticated slot.
    const jwt = await runtimeToken('svc-lim-b');
    instanceIdOf(await anonymous[0].call('service/register', { serviceId: 'svc-lim-b', jwt }));
    const third = await RpcClient.connect(ctl.wsUrl);
    // Now 4 open: the overall cap refuses even a socket with a valid token.
    expect(await refusal(RpcClient.connect(ctl.wsUrl, { token: await runtimeToken('svc-lim-c') }))).toBe(503);
    for (const client of [...anonymous, third, withToken]) await client.close();
    await ctl.quiesce();
  });

  it('closes a socket that presented no verified token within the deadline with 1008', async () => {
    const idle = await RpcClient.connect(ctl.wsUrl);
    const started = Date.now();
    expect(await idle.waitClosed()).toEqual({ code: 1008, reason: 'Authentication timeout' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(600);
    // Its slot is free again.
    await ctl.quiesce();
    const next = await RpcClient.connect(ctl.wsUrl);
    await next.close();
  });

  it('leaves an authenticated socket open past the deadline', async () => {
    const header = await RpcClient.connect(ctl.wsUrl, { token: await runtimeToken('svc-lim-d') });
    const registered = await RpcClient.connect(ctl.wsUrl);
    const jwt = await runtimeToken('svc-lim-e');
    instanceIdOf(await registered.call('service/register', { serviceId: 'svc-lim-e', jwt }));
    await new Promise((r) => setTimeout(r, 1200));
    expect((await header.call('discovery/lookup', { serviceId: 'svc-lim-d' })).result).toBeDefined();
    expect((await registered.call('discovery/lookup', { serviceId: 'svc-lim-e' })).result).toBeDefined();
    await header.close();
    await registered.close();
  });
});
