import { Agent, request, type ClientRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort, startBuilt, type Spawned } from '../support/processes.js';
import { callers } from '../support/tokens.js';
import { waitFor, withTimeout } from '../support/wait.js';

/**
 * Sent with `Expect: 100-continue`, a request is answered `100 Continue` by Node in the same step that hands
 * it to the app: once the client has that, the server holds the request (in flight for its graceful close).
 */
const held = (req: ClientRequest): Promise<void> =>
  withTimeout(new Promise<void>((resolve) => req.once('continue', () => resolve())), 'the server to take the request');

/** Whether a new connection to `port` is refused: the process has stopped listening, so its shutdown has begun. */
const refused = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });

describe('SIGTERM on the api', () => {
  let api: Spawned;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    api = await startBuilt('apps/api/main.js', port, { API_PORT: String(port), CONTROLLER_HOST_ID: 'h-ctl' });
  });

  afterAll(async () => {
    api?.child.kill('SIGKILL');
    await api?.exit();
  });

  it('finishes a burst of in-flight requests without a reset, refuses new connections and exits 0', async () => {
    const admin = await callers.admin();
    const prefix = `shutdown-${Date.now().toString(36)}`;
    const agent = new Agent({ keepAlive: false });

    /** A POST whose body is half sent now and finished by `finish()`, after SIGTERM. */
    const slowCreate = (name: string) => {
      const body = JSON.stringify({ tagName: name });
      let finish = (): void => {};
      let taken: Promise<void> = Promise.resolve();
      const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port,
            agent,
            method: 'POST',
            path: '/tags',
            headers: {
              authorization: `Bearer ${admin}`,
              'content-type': 'application/json',
              'content-length': body.length,
              expect: '100-continue',
            },
          },
          (res) => {
            let text = '';
            res.on('data', (c: Buffer) => (text += c.toString('utf8')));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
          },
        );
        // A reset (ECONNRESET, socket hang up) rejects and fails the test.
        req.on('error', reject);
        taken = held(req);
        req.write(body.slice(0, 5));
        finish = () => req.end(body.slice(5));
      });
      return { answer, taken, finish: () => finish() };
    };

    const burst = Array.from({ length: 20 }, (_, i) => slowCreate(`${prefix}-${i}`));
    // Every request has reached the app before shutdown starts.
    await Promise.all(burst.map((r) => r.taken));
    api.child.kill('SIGTERM');
    // The bodies are finished only once shutdown is under way: the api no longer listens.
    await waitFor(() => refused(port), 'the api to stop listening');
    for (const pending of burst) pending.finish();
    const results = await Promise.all(burst.map((r) => r.answer));
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    expect(results.map((r) => (JSON.parse(r.text) as { tagName: string }).tagName).sort()).toEqual(
      burst.map((_, i) => `${prefix}-${i}`).sort(),
    );
    // A new connection is refused (a kept-alive one may still get 503 with Retry-After for a moment).
    const fresh = new Promise((resolve, reject) =>
      request({ host: '127.0.0.1', port, agent, path: '/health/live' }, resolve).on('error', reject).end(),
    );
    await expect(fresh).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(await api.exit()).toBe(0);
  }, 60_000);
});

describe('shutdown cannot hang', () => {
  /** A POST whose body never completes: the server waits for it on shutdown. Resolves once the app holds it. */
  const stuckRequest = (port: number): Promise<void> => {
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/tags',
      headers: { 'content-type': 'application/json', 'content-length': 1000, expect: '100-continue' },
    });
    req.on('error', () => undefined);
    const taken = held(req);
    req.write('{"tagName":');
    return taken;
  };
  let api: Spawned | undefined;

  afterEach(async () => {
    api?.child.kill('SIGKILL');
    await api?.exit();
  });

  it('after SHUTDOWN_TIMEOUT_MS the process exits 1, with a line saying why', async () => {
    const port = await freePort();
    api = await startBuilt('apps/api/main.js', port, {
      API_PORT: String(port),
      CONTROLLER_HOST_ID: 'h-ctl',
      SHUTDOWN_TIMEOUT_MS: '1500',
    });
    await stuckRequest(port);
    api.child.kill('SIGTERM');
    // Its own line says the deadline ended it (not the SIGKILL exit() sends after 20 s, which gives no code).
    expect(await api.exit(20_000)).toBe(1);
    expect(api.output()).toMatch(/shutdown took longer than 1500 ms/);
  }, 60_000);

  it('a second SIGTERM exits 1 at once instead of waiting', async () => {
    const port = await freePort();
    api = await startBuilt('apps/api/main.js', port, { API_PORT: String(port), CONTROLLER_HOST_ID: 'h-ctl' });
    await stuckRequest(port);
    api.child.kill('SIGTERM');
    // The first signal was handled: shutdown is under way (the stuck request holds it, for 25 s by default).
    await waitFor(() => refused(port), 'the api to stop listening');
    api.child.kill('SIGINT');
    // Its own line says the second signal ended it, not the 25 s deadline (whose line differs).
    expect(await api.exit(20_000)).toBe(1);
    expect(api.output()).toMatch(/SIGINT again, exiting without waiting/);
  }, 60_000);
});
