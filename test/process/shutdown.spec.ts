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
    await expect(fetch(`http://127.0.0.1:${port}/health/live`)).rejects.toThrow();
    expect(await api.exit()).toBe(0);
  }, 60_000);
});
