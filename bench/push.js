// Config push (DESIGN 14): runtimes registered over two controller replicas, 50 services in two
// environments; an operator writes one layer every 100 ms through two api processes. Latency from the
// write to each concerned runtime's `config/changed`, the share of expected receipts, and every frame a
// runtime the change does not concern received (goal: p99 ≤ 1 s, 100 %, 0).
import WebSocket from 'ws';
import {
  fact,
  log,
  makeIssuer,
  percentile,
  round,
  runBenchmark,
  sleep,
  SMOKE,
  startProduct,
  benchDatabase,
} from './lib.js';

const HOST = 'bench-host';
const RUNTIMES = SMOKE ? 200 : 1000;
const SERVICES = SMOKE ? 10 : 50;
const ENVS = ['prod', 'dev'];
const WRITE_EVERY_MS = 100;
const SECONDS = SMOKE ? 5 : 30;
/** After the last write: long enough for any late or stray frame to arrive. */
const SETTLE_MS = 3000;

const now = () => performance.timeOrigin + performance.now();
const serviceOf = (k) => `svc-${k}`;
const layerKey = (serviceId, envTag) => JSON.stringify([serviceId, envTag]);

/** A runtime's socket: registers, then records every frame it receives after its registration. */
async function runtime(url, token, registration, onFrame) {
  const socket = new WebSocket(`${url.replace('http', 'ws')}/ws/microservice`, {
    headers: { authorization: `Bearer ${token}` },
  });
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  const answer = await new Promise((resolve) => {
    socket.once('message', (data) => resolve(JSON.parse(data.toString())));
    socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'service/register', params: registration }));
  });
  if (answer.error !== undefined) throw new Error(`register: ${JSON.stringify(answer.error)}`);
  socket.on('message', (data) => onFrame(data.toString(), now()));
  return socket;
}

await runBenchmark('push', 'config/changed to exactly the runtimes a layer write concerns', async () => {
  const db = await benchDatabase('push');
  const issuer = await makeIssuer();
  const env = { CONTROLLER_HOST_ID: HOST };
  const [a, b, apiA, apiB] = await Promise.all([
    startProduct('controller', { databaseUrl: db.url, issuer, name: 'controller-a', env }),
    startProduct('controller', { databaseUrl: db.url, issuer, name: 'controller-b', env }),
    startProduct('api', { databaseUrl: db.url, issuer, name: 'api-a', env }),
    startProduct('api', { databaseUrl: db.url, issuer, name: 'api-b', env }),
  ]);
  const admin = await issuer.sign({ sub: 'bench-admin', scope: 'portal.admin' });

  // Runtime i: service i % SERVICES, then alternately on each controller and in each environment.
  const tokens = new Map();
  const tokenOf = async (serviceId, envTag) => {
    const key = layerKey(serviceId, envTag);
    if (!tokens.has(key)) tokens.set(key, await issuer.sign({ sub: 'rt', host: HOST, sid: serviceId, env: envTag }));
    return tokens.get(key);
  };
  /** The latest write of each layer, by layer key: when it was sent (a layer is written again only after 15 s). */
  const writes = new Map();
  const latencies = [];
  let receipts = 0;
  let duplicates = 0;
  let strays = 0;
  const receiptsSeen = new Set();
  const runtimes = [];
  log(`registering ${RUNTIMES} runtimes of ${SERVICES} services over two controllers`);
  for (let i = 0; i < RUNTIMES; i += 50) {
    const batch = Array.from({ length: Math.min(50, RUNTIMES - i) }, async (_, j) => {
      const n = i + j;
      const serviceId = serviceOf(n % SERVICES);
      const envTag = ENVS[Math.floor(n / (2 * SERVICES)) % ENVS.length];
      const controller = Math.floor(n / SERVICES) % 2 === 0 ? a : b;
      const onFrame = (text, at) => {
        const frame = JSON.parse(text);
        const layer = frame.params?.layer;
        const write =
          frame.method === 'config/changed' && layer !== undefined && layer.host === HOST
            ? writes.get(layerKey(layer.serviceId, layer.envTag))
            : undefined;
        const concerned =
          write !== undefined && layer.serviceId === serviceId && (layer.envTag === null || layer.envTag === envTag);
        if (!concerned) {
          strays += 1;
          return;
        }
        const receipt = `${n}|${write.key}|${frame.params.version}`;
        if (receiptsSeen.has(receipt)) {
          duplicates += 1;
          return;
        }
        receiptsSeen.add(receipt);
        receipts += 1;
        latencies.push(at - write.sentAt);
      };
      const socket = await runtime(
        controller.url,
        await tokenOf(serviceId, envTag),
        { serviceId, envTag, address: `10.7.${n >> 8}.${n & 255}`, port: 8000 },
        onFrame,
      );
      runtimes.push({ socket, serviceId, envTag });
    });
    await Promise.all(batch);
  }
  await sleep(1000);

  const total = Math.floor((SECONDS * 1000) / WRITE_EVERY_MS);
  log(`writing one layer every ${WRITE_EVERY_MS} ms for ${SECONDS} s (${total} writes) through two api processes`);
  let expected = 0;
  const errors = [];
  const inFlight = new Set();
  const started = now();
  for (let w = 0; w < total; w++) {
    const due = started + w * WRITE_EVERY_MS;
    if (due - now() > 1) await sleep(due - now());
    // Cycles through the services; per service its prod layer, its dev layer, then its all-env layer.
    const serviceId = serviceOf(w % SERVICES);
    const envTag = [...ENVS, null][Math.floor(w / SERVICES) % 3];
    const query = new URLSearchParams({ host: HOST, serviceId, ...(envTag === null ? {} : { envTag }) });
    const api = w % 2 === 0 ? apiA : apiB;
    const concerned = runtimes.filter((r) => r.serviceId === serviceId && (envTag === null || r.envTag === envTag));
    const key = layerKey(serviceId, envTag);
    // Recorded before the request: a runtime may hear of the commit before the PUT's answer arrives.
    writes.set(key, { key, sentAt: now() });
    expected += concerned.length;
    const work = fetch(`${api.url}/config-server/admin/properties?${query}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ properties: { 'bench.write': w } }),
    })
      .then(async (response) => {
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`PUT answered ${response.status}`);
      })
      .catch((error) => errors.push(error.message))
      .finally(() => inFlight.delete(work));
    inFlight.add(work);
  }
  await Promise.all(inFlight);
  await sleep(SETTLE_MS);
  if (errors.length > 0) throw new Error(`write errors: ${errors.slice(0, 3).join('; ')}`);
  for (const { socket } of runtimes) socket.terminate();
  await Promise.all([a.stop(), b.stop(), apiA.stop(), apiB.stop()]);

  const p50 = percentile(latencies, 50);
  const p99 = percentile(latencies, 99);
  log(
    `p50 ${round(p50, 1)} ms, p99 ${round(p99, 1)} ms, ${receipts}/${expected} receipts, ` +
      `${strays} frames to runtimes not concerned, ${duplicates} duplicates`,
  );
  return {
    rows: [
      fact('write to config/changed at the runtime, p50', round(p50, 1), 'ms'),
      fact('write to config/changed at the runtime, p99', round(p99, 1), 'ms', '≤ 1000 ms', p99 <= 1000),
      fact(
        'share of expected receipts',
        round((100 * receipts) / Math.max(1, expected), 2),
        '%',
        '100 %',
        receipts === expected,
      ),
      fact('frames to runtimes not concerned', strays, 'frames', '0', strays === 0),
      fact('duplicate frames (one change, one runtime)', duplicates, 'frames', '0', duplicates === 0),
    ],
    notes: [
      `${RUNTIMES} runtimes (${RUNTIMES / SERVICES} per service, half on each of two controller processes, half in ` +
        `prod and half in dev) of ${SERVICES} services; ${total} admin PUTs, one every ${WRITE_EVERY_MS} ms, ` +
        `alternating between two api processes, each replacing one service layer (prod, dev or all environments) ` +
        `so it concerns ${RUNTIMES / SERVICES / 2} or ${RUNTIMES / SERVICES} runtimes. Latency is from sending the PUT (before its commit: an upper bound) to ` +
        `the runtime's receipt of config/changed, on one clock; every frame a runtime receives after registering ` +
        `is counted. Everything shares this machine's cores.`,
    ],
  };
});
