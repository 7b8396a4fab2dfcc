import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { migrate } from '#database';
import { freePort, startBuilt, type Spawned } from '../support/processes.js';
import { statusLineOf } from '../support/status-line.js';

// DESIGN 3: every refusal reaches its client, also when the client is still sending a body the server will
// never read. The built processes, as operators run them: the timing that loses an answer is theirs.
const RUNS = 20;
const BODY = `{"tagName":"big","tagDesc":"${'d'.repeat(3 * 1024 * 1024)}"}`;

let api: Spawned | undefined;
let controller: Spawned | undefined;
const ports = { api: 0, controller: 0 };

beforeAll(async () => {
  await migrate(process.env.DATABASE_SESSION_URL || (process.env.DATABASE_URL ?? ''));
  [ports.api, ports.controller] = [await freePort(), await freePort()];
  [api, controller] = await Promise.all([
    startBuilt('apps/api/main.js', ports.api, { API_PORT: String(ports.api), CONTROLLER_HOST_ID: 'linger-host' }),
    startBuilt('apps/controller/main.js', ports.controller, {
      CONTROLLER_PORT: String(ports.controller),
      CONTROLLER_HOST_ID: 'linger-host',
    }),
  ]);
}, 90_000);
afterAll(() => {
  api?.child.kill('SIGKILL');
  controller?.child.kill('SIGKILL');
});

describe('an early refusal of a request with a large body arrives before the connection closes', () => {
  it.each([
    [
      '413 for a declared length over the limit, after 100 Continue',
      `POST /tags HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n` +
        `Connection: close\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY}`,
      'HTTP/1.1 413 Payload Too Large',
    ],
    [
      '413 for a declared length over the limit',
      `POST /tags HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
        `Connection: close\r\nContent-Length: ${BODY.length}\r\n\r\n${BODY}`,
      'HTTP/1.1 413 Payload Too Large',
    ],
    [
      "431 from Node's parser, the body still coming",
      `POST /tags HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${BODY.length}\r\n\r\n${BODY}`,
      'HTTP/1.1 431 Request Header Fields Too Large',
    ],
  ])('%s', async (_, request, expected) => {
    for (const target of ['api', 'controller'] as const) {
      const answers: string[] = [];
      for (let i = 0; i < RUNS; i++) answers.push(await statusLineOf(ports[target], request));
      expect([target, answers]).toEqual([target, answers.map(() => expected)]);
    }
  });
});
