import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { decodeJwt } from 'jose';
import { dataDir, freePort, requireBuild, run } from '../support/processes.js';

const sh = promisify(execFile);

describe('npm start (dist/scripts/dev.js) with the embedded PostgreSQL', () => {
  let env: Record<string, string>;
  let dir: string;

  beforeAll(async () => {
    requireBuild();
    dir = await dataDir();
    env = {
      BINDERY_DATA_DIR: dir,
      API_PORT: String(await freePort()),
      CONTROLLER_PORT: String(await freePort()),
      EMBEDDED_POSTGRES_PORT: String(await freePort()),
      LISTEN_HOST: '127.0.0.1',
    };
  });

  it('starts both processes, prints working tokens and curl lines, stops cleanly, and keeps data', async () => {
    const first = run('scripts/dev.js', [], env);
    await first.waitFor(/Ctrl-C stops everything/);
    const admin = (await first.waitFor(/ADMIN=(\S+)/))[1];
    // The dev issuer is the api's URL (DESIGN 6.5), in the banner and in the tokens it prints.
    const issuer = `http://localhost:${env.API_PORT}`;
    expect(first.output()).toContain(`Dev tokens (issuer ${issuer}, valid 8 hours`);
    expect(decodeJwt(admin ?? '').iss).toBe(issuer);
    const curl = (await first.waitFor(/^ {2}(curl .*\/tags)$/m))[1];
    const listed = await sh('sh', ['-c', curl]);
    expect(JSON.parse(listed.stdout)).toMatchObject({ total: expect.any(Number), tags: expect.any(Array) });
    // The runtime token's line reads the seeded configuration, as printed.
    const configCurl = (await first.waitFor(/^ {2}(curl .*\/config-server\/configs.*)$/m))[1];
    const config = JSON.parse((await sh('sh', ['-c', configCurl])).stdout) as Record<string, unknown>;
    expect(config).toMatchObject({ 'server.httpPort': 8443, 'server.enableHttps': true });
    // The dev runtime client's curl line, as printed, gets a token that reads the same configuration.
    const tokenCurl = (await first.waitFor(/^ {2}(curl -s -u .*\/oauth2\/token)$/m))[1];
    const issued = JSON.parse((await sh('sh', ['-c', tokenCurl])).stdout) as { access_token: string; scope: string };
    expect(issued).toMatchObject({ token_type: 'Bearer', scope: 'portal.r' });
    const viaIssuer = await fetch(
      `http://127.0.0.1:${env.API_PORT}/config-server/configs?host=dev-host&serviceId=petstore&envTag=dev`,
      { headers: { authorization: `Bearer ${issued.access_token}` } },
    );
    expect(viaIssuer.status).toBe(200);
    // npm run example:runtime with the printed client: config, then a registration, then close.
    const [, clientId, clientSecret] = await first.waitFor(/export CLIENT_ID=(\S+) CLIENT_SECRET=(\S+)/);
    const example = run('scripts/example-runtime.js', ['--once'], {
      ...env,
      CLIENT_ID: clientId ?? '',
      CLIENT_SECRET: clientSecret ?? '',
      API_URL: `http://127.0.0.1:${env.API_PORT}`,
      CONTROLLER_URL: `ws://127.0.0.1:${env.CONTROLLER_PORT}`,
    });
    expect(await example.exit()).toBe(0);
    expect(example.output()).toContain('"server.httpPort":8443');
    expect(example.output()).toMatch(/runtimeInstanceId: \S+/);
    const api = `http://127.0.0.1:${env.API_PORT}`;
    const created = await fetch(`${api}/tags`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tagName: 'kept-across-restarts' }),
    });
    expect(created.status).toBe(201);
    const controller = await fetch(`http://127.0.0.1:${env.CONTROLLER_PORT}/health/ready`);
    expect(controller.status).toBe(200);

    // A token from `npm run token` works against the running api.
    const tokenRun = run('scripts/token.js', ['--sub', 'alice', '--scope', 'portal.r'], env);
    expect(await tokenRun.exit()).toBe(0);
    const fromCli = tokenRun.output().trim();
    expect(decodeJwt(fromCli).iss).toBe(issuer);
    expect((await fetch(`${api}/tags`, { headers: { authorization: `Bearer ${fromCli}` } })).status).toBe(200);

    first.child.kill('SIGTERM');
    expect(await first.exit()).toBe(0);
    await expect(fetch(`${api}/health/live`)).rejects.toThrow();
    expect(existsSync(join(dir, 'postgres', 'postmaster.pid'))).toBe(false);

    const second = run('scripts/dev.js', [], env);
    const admin2 = (await second.waitFor(/ADMIN=(\S+)/))[1];
    await second.waitFor(/Ctrl-C stops everything/);
    const again = await fetch(`${api}/tags?tagName=kept-across-restarts`, {
      headers: { authorization: `Bearer ${admin2}` },
    });
    expect(((await again.json()) as { total: number }).total).toBe(1);
    second.child.kill('SIGINT');
    expect(await second.exit()).toBe(0);
  }, 120_000);

  it('refuses a bad setting with one line naming the variable', async () => {
    const api = run('apps/api/main.js', [], { ...env, API_PORT: 'eighty' });
    expect(await api.exit()).toBe(1);
    // One JSON log line, like every line a process writes (DESIGN 9).
    expect(JSON.parse(api.output().trim())).toMatchObject({
      level: 60,
      msg: 'api: Invalid setting API_PORT: must be an integer from 0 to 65535 (got "eighty")',
    });
    const controller = run('apps/controller/main.js', [], { ...env, NODE_ENV: 'production' });
    expect(await controller.exit()).toBe(1);
    expect(controller.output().trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(controller.output()).msg).toContain('Invalid setting JWT_JWKS_URI');
  });

  it('npm run token refuses outside dev mode', async () => {
    const out = run('scripts/token.js', ['--sub', 'x'], {
      ...env,
      JWT_JWKS_FILE: '/nonexistent',
      JWT_ISSUER: 'i',
      CONTROLLER_HOST_ID: 'h',
    });
    expect(await out.exit()).toBe(1);
    expect(out.output()).toContain('only in dev mode');
  });
});
