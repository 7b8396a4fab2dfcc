import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { request, type IncomingHttpHeaders } from 'node:http';
import {
  instanceIdOf,
  RpcClient,
  startController,
  statementsDuring,
  UpgradeRefused,
  WAIT_MS,
  type TestController,
} from '../support/controller.js';
import { token, UNTRUSTED } from '../support/tokens.js';

const refusal = (work: Promise<unknown>): Promise<number> =>
  work.then(
    () => 0,
    (error: unknown) => (error instanceof UpgradeRefused ? error.status : -1),
  );

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** An upgrade request by hand, so a refusal's status, headers and body can all be read. */
function upgrade(wsUrl: string, headers: Record<string, string> = {}, method = 'GET', path?: string): Promise<Answer> {
  const url = new URL(wsUrl.replace(/^ws/, 'http'));
  return new Promise((resolve, reject) => {
    const req = request({
      host: url.hostname,
      port: url.port,
      path: path ?? url.pathname,
      method,
      timeout: WAIT_MS,
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==',
        'Sec-WebSocket-Version': '13',
        ...headers,
      },
    });
    req.once('upgrade', (_res, socket) => {
      socket.destroy();
      reject(new Error('the upgrade was accepted'));
    });
    req.once('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.once('timeout', () => req.destroy(new Error('no answer to the upgrade')));
    req.once('error', reject);
    req.end();
  });
}

/** A problem+json refusal (DESIGN 3 and 8): its status, content type and RFC 9457 members. */
function expectProblem(answer: Answer, status: number): void {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toBe('application/problem+json');
  const problem = JSON.parse(answer.body) as Record<string, unknown>;
  expect(problem).toEqual({
    type: 'about:blank',
    title: expect.any(String),
    status,
    detail: expect.any(String),
  });
}

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

  it('the 503 refusals are problem+json with Retry-After, for either cap', async () => {
    const anonymous = [await RpcClient.connect(ctl.wsUrl), await RpcClient.connect(ctl.wsUrl)];
    const overUnauthenticated = await upgrade(ctl.wsUrl);
    expectProblem(overUnauthenticated, 503);
    expect(overUnauthenticated.headers['retry-after']).toBe('5');
    expect(overUnauthenticated.body).toMatch(/WS_MAX_UNAUTHENTICATED/);
    const withToken = [
      await RpcClient.connect(ctl.wsUrl, { token: await runtimeToken('svc-lim-f') }),
      await RpcClient.connect(ctl.wsUrl, { token: await runtimeToken('svc-lim-g') }),
    ];
    const overAll = await upgrade(ctl.wsUrl, { Authorization: `Bearer ${await runtimeToken('svc-lim-h')}` });
    expectProblem(overAll, 503);
    expect(overAll.headers['retry-after']).toBe('5');
    expect(overAll.body).toMatch(/WS_MAX_CONNECTIONS/);
    for (const client of [...anonymous, ...withToken]) await client.close();
    await ctl.quiesce();
  });

  it('closes a socket that presented no verified token with 1008 when the deadline ends, not before', async () => {
    // The deadline is a timer of this process's controller: on the fake clock it ends exactly when told to.
    // Only timers are faked; I/O and the rest of the event loop run as ever.
    jest.useFakeTimers({ doNotFake: ['Date', 'hrtime', 'performance', 'nextTick', 'queueMicrotask', 'setImmediate'] });
    try {
      const idle = await RpcClient.connect(ctl.wsUrl);
      // Answered once the server has the socket, and so its deadline timer.
      await idle.roundTrip();
      jest.advanceTimersByTime(799);
      await idle.roundTrip('the socket to stay open until its deadline');
      jest.advanceTimersByTime(1);
      // Closed at once: the server answers no ping after its close frame.
      await expect(idle.roundTrip()).rejects.toThrow('the socket closed (1008 Authentication timeout)');
    } finally {
      jest.useRealTimers();
    }
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
    // A socket opened after them that never authenticates: its deadline (the same length) ends after theirs.
    const witness = await RpcClient.connect(ctl.wsUrl);
    expect(await witness.waitClosed()).toEqual({ code: 1008, reason: 'Authentication timeout' });
    expect((await header.call('discovery/lookup', { serviceId: 'svc-lim-d' })).result).toBeDefined();
    expect((await registered.call('discovery/lookup', { serviceId: 'svc-lim-e' })).result).toBeDefined();
    await header.close();
    await registered.close();
  });
});

// DESIGN 8: the upgrade's refusals are problem+json like every HTTP error, the 401 with the Bearer challenge.
describe('WebSocket upgrade refusals', () => {
  let ctl: TestController;
  beforeAll(async () => {
    ctl = await startController();
  });
  afterAll(() => ctl.close());

  it.each<[string, () => Promise<string>]>([
    ['a token of an untrusted key', () => token({ sid: 's', host: 'h' }, { key: UNTRUSTED })],
    ['an expired token', () => token({ sid: 's', host: 'h' }, { expiresIn: -3600 })],
    ['not a JWT', () => Promise.resolve('garbage')],
  ])('%s: 401 problem+json with error="invalid_token", before any SQL', async (_name, make) => {
    const credential = await make();
    const { result: answer, all } = await statementsDuring(() =>
      upgrade(ctl.wsUrl, { Authorization: `Bearer ${credential}` }),
    );
    expectProblem(answer, 401);
    expect(answer.headers['www-authenticate']).toBe('Bearer realm="bindery", error="invalid_token"');
    expect(answer.body).not.toContain(credential);
    expect(all).toEqual([]);
  });

  it.each<[string, string, Record<string, string>, number, Record<string, string>]>([
    ['POST', '/ws/microservice', {}, 405, { allow: 'GET' }],
    ['GET', '/ws/microservice', { 'Sec-WebSocket-Key': 'short' }, 400, {}],
    ['GET', '/ws/microservice', { 'Sec-WebSocket-Version': '99' }, 400, { 'sec-websocket-version': '13, 8' }],
    ['GET', '/ws/other', {}, 404, {}],
    ['GET', '/instances', {}, 404, {}],
  ])(
    '%s %s %j (a handshake refused before the token): %d problem+json',
    async (method, path, headers, status, extra) => {
      const answer = await upgrade(ctl.wsUrl, headers, method, path);
      expectProblem(answer, status);
      expect(answer.headers).toMatchObject(extra);
    },
  );
});
