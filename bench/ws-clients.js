// Load generator of the storm benchmark, in its own process: `count` WebSocket clients, each with its
// own token (its own sid), connect with a bounded number of handshakes in flight and call
// service/register. Reads one JSON job on stdin; prints `RESULT {...}`. With `hold`, the sockets stay
// open (idle) until a `close` line arrives on stdin.
import { createPrivateKey } from 'node:crypto';
import { createInterface } from 'node:readline';
import { SignJWT } from 'jose';
import WebSocket from 'ws';

const lines = createInterface({ input: process.stdin });
const job = JSON.parse(await new Promise((done) => lines.once('line', done)));
const key = createPrivateKey({ key: job.privateJwk, format: 'jwk' });
const now = Math.floor(Date.now() / 1000);
const tokens = await Promise.all(
  Array.from({ length: job.count }, (_, i) =>
    new SignJWT({ sub: `${job.prefix}-${i}`, host: job.hostId, sid: `${job.prefix}-${i}`, env: 'bench' })
      .setProtectedHeader({ alg: 'ES256', kid: job.privateJwk.kid, typ: 'JWT' })
      .setIssuer(job.issuer)
      .setAudience(job.audience)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(key),
  ),
);

const sockets = [];
const latencies = [];
const failures = [];
let next = 0;
const started = performance.now();
let lastDone = started;

function one(i) {
  return new Promise((done) => {
    const t0 = performance.now();
    const socket = new WebSocket(job.url, {
      headers: { authorization: `Bearer ${tokens[i]}` },
      // Several loopback source addresses: more ephemeral ports than one address has.
      localAddress: `127.0.0.${1 + (i % job.sources)}`,
      handshakeTimeout: 30_000,
    });
    const fail = (why) => {
      failures.push(why);
      socket.terminate();
      done();
    };
    socket.once('error', (error) => fail(error.message));
    socket.once('unexpected-response', (_, response) => fail(`HTTP ${response.statusCode}`));
    socket.once('open', () => {
      socket.send(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'service/register',
          params: {
            serviceId: `${job.prefix}-${i}`,
            envTag: 'bench',
            version: '1.0.0',
            protocol: 'http',
            address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
            port: 8080,
          },
        }),
      );
    });
    socket.once('message', (data) => {
      const reply = JSON.parse(data.toString());
      if (reply.result?.status !== 'registered') return fail(JSON.stringify(reply.error ?? reply));
      latencies.push(performance.now() - t0);
      lastDone = performance.now();
      socket.removeAllListeners('error');
      socket.on('error', () => undefined);
      if (job.hold) sockets.push(socket);
      else socket.close();
      done();
    });
  });
}

async function worker() {
  while (next < job.count) await one(next++);
}

await Promise.all(Array.from({ length: Math.min(job.window, job.count) }, worker));
const sorted = latencies.sort((a, b) => a - b);
const pick = (p) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
const seconds = (lastDone - started) / 1000;
process.stdout.write(
  `RESULT ${JSON.stringify({
    ok: latencies.length,
    failed: failures.length,
    failures: [...new Set(failures)].slice(0, 5),
    seconds,
    rate: latencies.length / seconds,
    p50: pick(50),
    p99: pick(99),
  })}\n`,
);
if (job.hold) {
  await new Promise((done) => lines.on('line', (line) => line.trim() === 'close' && done()));
  for (const socket of sockets) socket.close();
  await new Promise((done) => setTimeout(done, 2000));
}
process.exit(0);
