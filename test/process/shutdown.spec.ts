import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort, startBuilt, type Spawned } from '../support/processes.js';
import { callers } from '../support/tokens.js';

describe('SIGTERM on the api', () => {
  let api: Spawned;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    api = await startBuilt('apps/api/main.js', port, { API_PORT: String(port), CONTROLLER_HOST_ID: 'h-ctl' });
  });

  afterAll(() => {
    api.child.kill('SIGKILL');
  });

  it('finishes a burst of in-flight requests without a reset, refuses new connections and exits 0', async () => {
    const admin = await callers.admin();
    const prefix = `shutdown-${Date.now().toString(36)}`;
    const agent = new Agent({ keepAlive: false });

    /** A POST whose body is half sent now and finished by `finish()`, after SIGTERM. */
    const slowCreate = (name: string) => {
      const body = JSON.stringify({ tagName: name });
      let finish = (): void => {};
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
        req.write(body.slice(0, 5));
        finish = () => req.end(body.slice(5));
      });
      return { answer, finish: () => finish() };
    };

    const burst = Array.from({ length: 20 }, (_, i) => slowCreate(`${prefix}-${i}`));
    // Let every request reach the server before shutdown starts.
    await new Promise((r) => setTimeout(r, 300));
    api.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
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
  /** A POST whose body never completes: the server waits for it on shutdown. */
  const stuckRequest = (port: number): void => {
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/tags',
      headers: { 'content-type': 'application/json', 'content-length': 1000 },
    });
    req.on('error', () => undefined);
    req.write('{"tagName":');
  };

  it('after SHUTDOWN_TIMEOUT_MS the process exits 1, with a line saying why', async () => {
    const port = await freePort();
    const api = await startBuilt('apps/api/main.js', port, {
      API_PORT: String(port),
      CONTROLLER_HOST_ID: 'h-ctl',
      SHUTDOWN_TIMEOUT_MS: '1500',
    });
    stuckRequest(port);
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    api.child.kill('SIGTERM');
    expect(await api.exit(20_000)).toBe(1);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(api.output()).toMatch(/shutdown took longer than 1500 ms/);
  }, 60_000);

  it('a second SIGTERM exits 1 at once instead of waiting', async () => {
    const port = await freePort();
    const api = await startBuilt('apps/api/main.js', port, { API_PORT: String(port), CONTROLLER_HOST_ID: 'h-ctl' });
    stuckRequest(port);
    await new Promise((r) => setTimeout(r, 300));
    api.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    const started = Date.now();
    api.child.kill('SIGINT');
    expect(await api.exit(20_000)).toBe(1);
    // The default deadline is 25 s: exiting well before it proves the second signal was obeyed.
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(api.output()).toMatch(/SIGINT again, exiting without waiting/);
  }, 60_000);
});
