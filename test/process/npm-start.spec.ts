import { existsSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { dataDir, freePort, killGroup, requireBuild, run, runCommand, type Spawned } from '../support/processes.js';
import { waitFor } from '../support/wait.js';

/** `npm start` as people run it: through npm, signalled by a supervisor, started twice, README pasted. */
describe('npm start', () => {
  let env: Record<string, string>;
  let dir: string;
  let npm: Spawned | undefined;

  beforeAll(async () => {
    requireBuild();
    dir = await dataDir();
    env = {
      HOME: process.env.HOME ?? '/root',
      BINDERY_DATA_DIR: dir,
      API_PORT: String(await freePort()),
      CONTROLLER_PORT: String(await freePort()),
      EMBEDDED_POSTGRES_PORT: String(await freePort()),
      LISTEN_HOST: '127.0.0.1',
    };
  });
  afterAll(() => {
    if (npm !== undefined) killGroup(npm);
  });

  it('does not rebuild a current dist/, prints pasteable exports, refuses a second start, and stops on SIGTERM to npm', async () => {
    npm = runCommand('npm', ['start', '--silent'], env, process.cwd());
    const admin = (await npm.waitFor(/^ {2}export ADMIN=(\S+)$/m))[1] ?? '';
    await npm.waitFor(/^ {2}export RUNTIME=\S+$/m);
    await npm.waitFor(/Ctrl-C stops everything/);
    expect(npm.output()).toContain(`data stays in ${dir}/ for the next start`);
    expect(npm.output()).not.toMatch(/building dist/);
    const api = `http://127.0.0.1:${env.API_PORT}`;
    const controller = `http://127.0.0.1:${env.CONTROLLER_PORT}`;

    // The console URL works as printed: the page, and the admin token in its fragment (never in a query).
    const [, consoleUrl, consoleToken] = npm.output().match(/^ {2}(http:\S+\/console)#token=(\S+)$/m) ?? [];
    expect(consoleUrl).toBe(`http://localhost:${env.API_PORT}/console`);
    expect(consoleToken).toBe(admin);
    const page = await fetch(`${api}/console`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const instances = await fetch(`${api}/registry/instances`, {
      headers: { authorization: `Bearer ${consoleToken}` },
    });
    expect(instances.status).toBe(200);

    // The README's tagMatch=all example, pasted as is (only the port differs), finds the schema it tagged.
    const readme = readFileSync('README.md', 'utf8');
    const start = readme.indexOf('# Two tags to filter by');
    const end = readme.indexOf('\n', readme.indexOf('tagMatch=all"', start));
    const example = readme.slice(start, end).replaceAll('localhost:8080', `127.0.0.1:${env.API_PORT}`);
    const pasted = runCommand('sh', ['-c', example], { ...env, ADMIN: admin });
    expect(await pasted.exit()).toBe(0);
    const listing = pasted.output().slice(pasted.output().lastIndexOf('{"total"'));
    expect(JSON.parse(listing)).toMatchObject({ total: 1, schemas: [{ schemaId: 'pet' }] });

    // A second start stops before printing tokens, naming the busy port.
    const second = run('scripts/dev.js', [], env);
    expect(await second.exit()).toBe(1);
    expect(second.output()).toContain(`port ${env.API_PORT} (API_PORT) is already in use`);
    expect(second.output()).not.toContain('ADMIN=');
    expect((await fetch(`${api}/health/ready`)).status).toBe(200);

    // A supervisor signals the npm process itself, not its group.
    process.kill(npm.child.pid ?? 0, 'SIGTERM');
    await npm.exit(30_000);
    await expect(fetch(`${api}/health/live`)).rejects.toThrow();
    await expect(fetch(`${controller}/health/live`)).rejects.toThrow();
    await waitFor(() => !existsSync(join(dir, 'postgres', 'postmaster.pid')), 'PostgreSQL to remove its pid file');
  }, 180_000);

  it('names a busy embedded PostgreSQL port before starting anything', async () => {
    const busy = createServer();
    await new Promise<void>((listening) => busy.listen(0, '127.0.0.1', listening));
    const port = (busy.address() as AddressInfo).port;
    try {
      const ports = { API_PORT: String(await freePort()), CONTROLLER_PORT: String(await freePort()) };
      const start = run('scripts/dev.js', [], { ...env, ...ports, EMBEDDED_POSTGRES_PORT: String(port) });
      expect(await start.exit()).toBe(1);
      expect(start.output()).toContain(`port ${port} (EMBEDDED_POSTGRES_PORT) is already in use`);
      expect(start.output()).not.toContain('undefined');
    } finally {
      busy.close();
    }
  });

  it('npm run token with an unknown flag prints the usage, not a stack trace', async () => {
    const token = runCommand('npm', ['run', 'token', '--silent', '--', '--bogus'], env, process.cwd());
    expect(await token.exit()).toBe(2);
    expect(token.output()).toContain("token: Unknown option '--bogus'");
    expect(token.output()).toContain('usage: npm run token');
    expect(token.output()).not.toMatch(/^\s+at /m);
  });
});
