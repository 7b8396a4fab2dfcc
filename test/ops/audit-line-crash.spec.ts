import { request } from 'node:http';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { freePort, requireBuild, startBuilt } from '../support/processes.js';
import { token } from '../support/tokens.js';

beforeAll(requireBuild);

interface Answer {
  readonly status: number;
  readonly body: string;
}

/**
 * DESIGN 9 (issue 38, item 8): a binding line is on stdout before the answer leaves, so SIGKILL the moment
 * the answer arrives loses it no more than a crash would. The built api, its stdout a real pipe.
 */
describe('binding warning lines survive SIGKILL right after the answer', () => {
  it.each([
    ['a rejection (403)', {}, 403, 'Token host does not match requested host'],
    [
      'a mismatch allowed by ENFORCE_SID_HOST_MATCH=false',
      { ENFORCE_SID_HOST_MATCH: 'false' },
      200,
      'enforcement disabled',
    ],
  ])('%s', async (_name, env: Record<string, string>, status, words) => {
    const port = await freePort();
    const api = await startBuilt('apps/api/main.js', port, {
      API_PORT: String(port),
      CONTROLLER_HOST_ID: 'h-ctl',
      LOG_LEVEL: 'warn',
      ...env,
    });
    let stdout = '';
    api.child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    // 'close' comes once the child is gone and its stdout pipe was read to the end.
    const closed = new Promise<string | null>((done) => api.child.once('close', (_code, signal) => done(signal)));
    const runtime = await token({ sub: 'rt', scope: 'portal.r', host: 'audit-h1', sid: 'svc' });

    const answer = await new Promise<Answer>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port,
          path: '/config-server/configs?host=audit-h2&serviceId=svc',
          headers: { authorization: `Bearer ${runtime}` },
        },
        (res) => {
          // The answer's head is here: the process dies now, before any timer of its could write a block.
          api.child.kill('SIGKILL');
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
          // The body may be cut by the kill; the status is what the answer said.
          const done = () => resolve({ status: res.statusCode ?? 0, body });
          res.on('end', done);
          res.on('close', done);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(answer.status).toBe(status);
    expect(await closed).toBe('SIGKILL');

    const lines = stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const binding = lines.filter((line) => line.context === 'TokenBinding' && line.endpoint !== undefined);
    expect(binding).toEqual([
      expect.objectContaining({
        level: 40,
        requestedHost: 'audit-h2',
        tokenHost: 'audit-h1',
        requestedServiceId: 'svc',
        tokenSid: 'svc',
        msg: expect.stringContaining(words),
      }),
    ]);
    expect(stdout).not.toContain(runtime);
  });
});
