import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { get, type IncomingMessage } from 'node:http';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { listenApi, unique, type ListeningApi } from '../support/api.js';
import { instanceIdOf, RpcClient, startController, WS_PATH, type TestController } from '../support/controller.js';
import { freePort } from '../support/processes.js';
import { callers, token } from '../support/tokens.js';
import { waitFor } from '../support/wait.js';

/**
 * The compose file's proxy (deploy/nginx.conf) run for real in front of an api and a controller: only the
 * upstream addresses and ports are rewritten, since Docker's DNS names do not exist here.
 */
const nginx = spawnSync('nginx', ['-v']).status === 0;
const describeIt = nginx || process.env.CI === 'true' ? describe : describe.skip;

describeIt('deploy/nginx.conf in front of the apps', () => {
  let api: ListeningApi;
  let controller: TestController;
  let proxy: ChildProcess;
  let apiUrl: string;
  let controllerUrl: string;

  beforeAll(async () => {
    api = await listenApi({ TRUST_PROXY: 'true' });
    controller = await startController({ TRUST_PROXY: 'true' });
    const [apiPort, controllerPort] = [await freePort(), await freePort()];
    const dir = mkdtempSync(join(tmpdir(), 'bindery-nginx-'));
    // Like /tmp in the image: nginx's workers (not root) spool large bodies below it.
    chmodSync(dir, 0o755);
    const conf = readFileSync('deploy/nginx.conf', 'utf8')
      .replace('pid /tmp/nginx.pid;', `pid ${dir}/nginx.pid;`)
      .replaceAll('/tmp/nginx-', `${dir}/nginx-`)
      .replace('listen 8080;', `listen 127.0.0.1:${apiPort};`)
      .replace('listen 8081;', `listen 127.0.0.1:${controllerPort};`)
      .replace('http://api:8080', api.url)
      .replace('http://controller:8081', controller.httpUrl);
    const file = join(dir, 'nginx.conf');
    writeFileSync(file, conf);
    proxy = spawn('nginx', ['-c', file, '-p', dir, '-g', 'daemon off;'], { stdio: 'ignore' });
    apiUrl = `http://127.0.0.1:${apiPort}`;
    controllerUrl = `http://127.0.0.1:${controllerPort}`;
    await waitFor(
      () =>
        fetch(`${apiUrl}/health/live`).then(
          (r) => r.ok,
          () => false,
        ),
      'nginx to start',
      10_000,
      50,
    );
  }, 60_000);

  afterAll(async () => {
    proxy?.kill('SIGTERM');
    await controller?.close();
    await api?.close();
  });

  it('proxies the api and logs the address nginx saw, never one the client claimed', async () => {
    const admin = await callers.admin();
    const res = await fetch(`${apiUrl}/tags?limit=1`, {
      headers: { authorization: `Bearer ${admin}`, 'x-forwarded-for': '203.0.113.9', 'x-request-id': 'via-proxy-1' },
    });
    expect(res.status).toBe(200);
    const line = api.logs.lines.find((l) => (l.req as { id?: string } | undefined)?.id === 'via-proxy-1');
    expect((line?.req as { remoteAddress?: string }).remoteAddress).toBe('127.0.0.1');
  });

  it('passes the registry event stream through unbuffered, and serves the console with its CSP', async () => {
    const admin = await callers.admin();
    const received: string[] = [];
    const request = get(`${apiUrl}/registry/changes`, { headers: { authorization: `Bearer ${admin}` } });
    const response = await new Promise<IncomingMessage>((resolve, reject) => {
      request.once('response', resolve);
      request.once('error', reject);
    });
    try {
      expect(response.statusCode).toBe(200);
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => received.push(chunk));
      const seen = (text: string): Promise<void> =>
        waitFor(() => received.join('').includes(text), `"${text}" through the proxy`, 2000);
      // Each small event must arrive through the proxy as it happens, not when the response ends.
      await seen('event: ready');
      const serviceId = unique('via-proxy');
      const runtime = await RpcClient.connect(controller.wsUrl, {
        token: await token({ sub: 'rt', sid: serviceId, host: controller.hostId }),
      });
      await runtime.call('service/register', { serviceId });
      await seen(`"serviceId":"${serviceId}"`);
      runtime.socket.close();
    } finally {
      request.destroy();
    }
    const page = await fetch(`${apiUrl}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
  });

  it('does not route /metrics on either port, in any spelling that reaches it; the processes still serve it', async () => {
    // Prometheus scrapes each process directly on the internal network (DESIGN 9).
    for (const direct of [api.url, controller.httpUrl]) {
      const res = await fetch(`${direct}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('# TYPE');
    }
    const spellings = ['/metrics', '/metrics/', '/metrics?format=text', '//metrics', '/%6detrics', '/./metrics'];
    spellings.push('/tags/../metrics', '/metrics%2F', '/metrics;x');
    for (const base of [apiUrl, controllerUrl]) {
      for (const path of spellings) {
        const res = await rawGet(base, path);
        expect({ path, status: res.code }).toEqual({ path, status: 404 });
        expect(res.body).not.toContain('# TYPE');
      }
      const res = await fetch(`${base}/metrics`);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(await res.json()).toEqual({ type: 'about:blank', title: 'Not Found', status: 404, detail: 'Not found' });
    }
  });

  it('lets the api answer an oversized body itself (413 problem+json, not an nginx page)', async () => {
    const admin = await callers.admin();
    const res = await fetch(`${apiUrl}/tags`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tagName: 'x'.repeat(5 * 1024 * 1024) }),
    });
    expect(res.status).toBe(413);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
  });

  it('upgrades the controller WebSocket and keeps it: register, then lookup on the same socket', async () => {
    const serviceId = unique('proxied');
    const client = await RpcClient.connect(`${controllerUrl.replace('http', 'ws')}${WS_PATH}`, {
      token: await token({ sub: 'rt', sid: serviceId, host: controller.hostId }),
    });
    const id = instanceIdOf(await client.call('service/register', { serviceId, address: '10.4.0.1', port: 1 }));
    const lookup = await client.call('discovery/lookup', { serviceId });
    expect(lookup.result?.nodes).toEqual([expect.objectContaining({ runtimeInstanceId: id })]);
    await client.close();
  });
});

/** GET with the path sent exactly as written (fetch would normalise `..`, `.` and `//` before sending). */
function rawGet(base: string, path: string): Promise<{ code: number | undefined; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const request = get({ hostname, port, path });
    request.once('error', reject);
    request.once('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ code: response.statusCode, body }));
    });
  });
}
