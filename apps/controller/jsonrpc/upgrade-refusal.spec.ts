import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { migrate } from '#database';
import { freePort, startBuilt, type Spawned } from '../../../test/support/processes.js';
import { statusLineOf } from '../../../test/support/status-line.js';

// DESIGN 3 and 8: an upgrade's refusal reaches its client also when the client is still sending a body
// the controller never reads. The built process, as operators run it: the timing that loses an answer is its.
const RUNS = 3;
/** The client reads its answer this late, so a reset the server sent meanwhile would have discarded it. */
const READ_AFTER_MS = 200;
/** More than the kernel buffers of both ends hold, so the client is still writing when the answer arrives. */
const BODY = 'd'.repeat(32 * 1024 * 1024);

let controller: Spawned | undefined;
let port = 0;

beforeAll(async () => {
  await migrate(process.env.DATABASE_SESSION_URL || (process.env.DATABASE_URL ?? ''));
  port = await freePort();
  controller = await startBuilt('apps/controller/main.js', port, {
    CONTROLLER_PORT: String(port),
    CONTROLLER_HOST_ID: 'refusal-host',
  });
}, 90_000);
afterAll(() => {
  controller?.child.kill('SIGKILL');
});

const upgrade = (path: string, extra = '') =>
  `GET ${path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade, close\r\n` +
  `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n${extra}` +
  `Content-Length: ${BODY.length}\r\n\r\n${BODY}`;

describe('refuseUpgrade', () => {
  it.each([
    ['404 for a path without a WebSocket endpoint', upgrade('/nope'), 'HTTP/1.1 404 Not Found'],
    [
      '401 for a bearer token that fails verification',
      upgrade('/ws/microservice', 'Authorization: Bearer not.a.token\r\n'),
      'HTTP/1.1 401 Unauthorized',
    ],
  ])('%s arrives while the client is still sending its body', async (_, request, expected) => {
    const answers: string[] = [];
    for (let i = 0; i < RUNS; i++) answers.push(await statusLineOf(port, request, READ_AFTER_MS));
    expect(answers).toEqual(answers.map(() => expected));
  });
});
