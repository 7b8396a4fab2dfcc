import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort, requireBuild, run, type Spawned } from '../support/processes.js';
import { ISSUER, callers, writeJwksFile } from '../support/tokens.js';

describe('SIGTERM on the api', () => {
  let api: Spawned;
  let port: number;

  beforeAll(async () => {
    requireBuild();
    port = await freePort();
    api = run('apps/api/main.js', [], {
      DATABASE_URL: process.env.DATABASE_URL ?? '',
      API_PORT: String(port),
      LISTEN_HOST: '127.0.0.1',
      JWT_JWKS_FILE: writeJwksFile(),
      JWT_ISSUER: ISSUER,
      CONTROLLER_HOST_ID: 'h-ctl',
      LOG_LEVEL: 'warn',
    });
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const ok = await fetch(`http://127.0.0.1:${port}/health/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`api did not start:\n${api.output()}`);
  });

  afterAll(() => {
    api.child.kill('SIGKILL');
  });

  it('finishes an in-flight request, refuses new connections, closes the pool and exits 0', async () => {
    const admin = await callers.admin();
    const name = `shutdown-${Date.now().toString(36)}`;
    const body = JSON.stringify({ tagName: name });
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
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
      req.on('error', reject);
      // Half the body now, the rest after SIGTERM: the request is in flight while shutdown starts.
      req.write(body.slice(0, 5));
      setTimeout(() => {
        api.child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(5)), 300);
      }, 200);
    });
    const result = await answer;
    expect(result.status).toBe(201);
    expect(JSON.parse(result.text)).toMatchObject({ tagName: name });
    await expect(fetch(`http://127.0.0.1:${port}/health/live`)).rejects.toThrow();
    expect(await api.exit()).toBe(0);
  }, 60_000);
});
