// Client process of the fleet benchmark (bench/scale-fleet.js): holds runtime and watcher sockets and
// records the server notifications they receive. Driven over IPC: each message `{ id, op, ... }` is
// answered `{ id, ... }`. Runtimes each sign their own token (own sid), like bench/ws-clients.js.
// The parent imports its helpers (clientProcess, storm, collect, open); it serves only with --fleet-child.
import { fork } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import WebSocket from 'ws';
import { AUDIENCE, ISSUER, onCleanup, RESULTS } from './lib.js';

const now = () => performance.timeOrigin + performance.now();
/** Registered runtime sockets by global index (each spec's binding decides what a frame must match). */
const runtimes = new Map();
const watchers = [];
/** config/changed receipts of bound runtimes: [index, productId, productVersion, version, at]. */
let receipts = [];
/** Frames a runtime received that its registration does not call for (another layer, or any other frame). */
let strays = [];
/** discovery/changed receipts: [step, at, controller] for each version new in a watcher's node set. */
let discoveries = [];

/** A JSON-RPC socket: `call` resolves with the answer, `onFrame` sees every other frame. */
export function open(url, token, source, onFrame = () => undefined) {
  const socket = new WebSocket(url, {
    headers: { authorization: `Bearer ${token}` },
    // Several loopback source addresses: more ephemeral ports than one address has.
    localAddress: `127.0.0.${1 + source}`,
    handshakeTimeout: 60_000,
  });
  const pending = new Map();
  let nextId = 1;
  socket.on('message', (data) => {
    const text = data.toString();
    const message = JSON.parse(text);
    if (message.id !== undefined && pending.has(message.id)) {
      pending.get(message.id)(message);
      pending.delete(message.id);
    } else onFrame(message, now());
  });
  // A socket closed mid-call answers its pending calls, so a worker never waits for an answer that cannot come.
  socket.on('close', (code) => {
    for (const resolve of pending.values()) resolve({ error: { code: -1, message: `socket closed (${code})` } });
    pending.clear();
  });
  const opened = new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
    socket.once('unexpected-response', (_, response) => reject(new Error(`HTTP ${response.statusCode}`)));
  });
  const call = (method, params) =>
    new Promise((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  return { socket, opened, call };
}

let specs = [];
let tokens = [];
let retries = 0;

/** The fleet: each bound group on its own product, the rest on another version of one or on none. */
export function fleetOf(p) {
  const specs = [];
  for (const size of [...p.bound].reverse()) {
    for (let k = 0; k < size; k++) specs.push({ productId: `prod-${size}`, productVersion: '1.0' });
  }
  for (let k = 0; specs.length < p.runtimes; k++) {
    specs.push(k % 2 === 0 ? { productId: `prod-${p.bound.at(-1)}`, productVersion: '2.0' } : {});
  }
  return specs.map((spec, index) => ({ ...spec, index, sid: `rt-${index}`, controller: index % 2 }));
}

/** A call answered -32004 (the controller's pool saturated) is sent again after retryAfterSec, as a runtime would. */
async function callRetrying(client, method, params) {
  let answer = await client.call(method, params);
  for (let attempt = 0; answer.error?.code === -32004 && attempt < 5; attempt++) {
    retries += 1;
    await new Promise((done) => setTimeout(done, 1000 * (answer.error.data?.retryAfterSec ?? 1)));
    answer = await client.call(method, params);
  }
  return answer;
}

/** Signs one token per runtime ahead of the storm, so signing does not count in its rate. */
async function prepare({ hostId, issuer, audience, privateJwk, ...job }) {
  specs = job.specs;
  const key = createPrivateKey({ key: privateJwk, format: 'jwk' });
  const iat = Math.floor(Date.now() / 1000);
  tokens = await Promise.all(
    specs.map((spec) =>
      new SignJWT({ sub: spec.sid, host: hostId, sid: spec.sid, env: 'bench' })
        .setProtectedHeader({ alg: 'ES256', kid: privateJwk.kid, typ: 'JWT' })
        .setIssuer(issuer)
        .setAudience(audience)
        .setIssuedAt(iat)
        .setExpirationTime(iat + 4 * 3600)
        .sign(key),
    ),
  );
  return { tokens: tokens.length };
}

/** Opens the prepared runtimes with at most `window` handshakes in flight; answers per-client latencies. */
async function openRuntimes({ urls, window, sources }) {
  const latencies = [];
  const failures = [];
  let next = 0;
  retries = 0;
  const started = now();
  let lastDone = started;
  const one = async (k) => {
    const spec = specs[k];
    const t0 = now();
    const onFrame = (message, at) => {
      const layer = message.params?.layer;
      const bound =
        message.method === 'config/changed' &&
        spec.productId !== undefined &&
        layer?.productId === spec.productId &&
        layer?.productVersion === spec.productVersion &&
        (layer?.envTag === null || layer?.envTag === 'bench');
      if (bound) receipts.push([spec.index, layer.productId, layer.productVersion, message.params.version, at]);
      else strays.push([spec.index, message.method, layer?.productId ?? null, layer?.productVersion ?? null]);
    };
    const client = open(urls[spec.controller], tokens[k], k % sources, onFrame);
    try {
      await client.opened;
      const params = {
        serviceId: spec.sid,
        envTag: 'bench',
        version: '1.0.0',
        protocol: 'http',
        address: `10.${(spec.index >> 16) & 255}.${(spec.index >> 8) & 255}.${spec.index & 255}`,
        port: 8080,
        ...(spec.productId === undefined ? {} : { productId: spec.productId, productVersion: spec.productVersion }),
      };
      const answer = await callRetrying(client, 'service/register', params);
      if (answer.result?.status !== 'registered') throw new Error(JSON.stringify(answer.error ?? answer));
      lastDone = now();
      latencies.push(lastDone - t0);
      client.socket.on('error', () => undefined);
      runtimes.set(spec.index, client);
    } catch (error) {
      failures.push(error.message);
      client.socket.terminate();
    }
  };
  const worker = async () => {
    while (next < specs.length) await one(next++);
  };
  await Promise.all(Array.from({ length: Math.min(window, specs.length) }, worker));
  return { ok: latencies.length, failures: [...new Set(failures)].slice(0, 5), retries, started, lastDone, latencies };
}

/** Opens watchers of `serviceId` (`discovery/subscribe`), at most `window` at once. */
async function openWatchers({ count, urls, first, token, serviceId, window, sources }) {
  let next = 0;
  retries = 0;
  const failures = [];
  const one = async (k) => {
    const w = first + k;
    let previous = new Set();
    const onFrame = (message, at) => {
      if (message.method !== 'discovery/changed') return;
      const text = JSON.stringify(message.params.nodes);
      const current = new Set(Array.from(text.matchAll(/"version":"v(\d+)"/g), (m) => Number(m[1])));
      for (const step of current) if (!previous.has(step)) discoveries.push([step, at, w % urls.length]);
      previous = current;
    };
    const client = open(urls[w % urls.length], token, w % sources, onFrame);
    try {
      await client.opened;
      const answer = await callRetrying(client, 'discovery/subscribe', { serviceId });
      if (answer.error !== undefined) throw new Error(JSON.stringify(answer.error));
      client.socket.on('error', () => undefined);
      watchers.push(client);
    } catch (error) {
      failures.push(error.message);
      client.socket.terminate();
    }
  };
  const worker = async () => {
    while (next < count) await one(next++);
  };
  await Promise.all(Array.from({ length: Math.min(window, count) }, worker));
  return { ok: count - failures.length, failures: [...new Set(failures)].slice(0, 5), retries };
}

const ops = {
  prepare,
  runtimes: openRuntimes,
  watchers: openWatchers,
  /** Hands over what was received since the last collect, and forgets it. */
  collect: () => {
    const out = { receipts, strays, discoveries, open: runtimes.size, watching: watchers.length };
    receipts = [];
    strays = [];
    discoveries = [];
    return out;
  },
  close: async () => {
    for (const client of [...runtimes.values(), ...watchers]) client.socket.close();
    await new Promise((done) => setTimeout(done, 1000));
    return {};
  },
};

/** Starts one client process, driven over IPC: `ask(op, args)` resolves with its answer. */
export function clientProcess(name) {
  const fd = openSync(join(RESULTS, 'logs', `${name}.log`), 'w');
  const child = fork(import.meta.filename, ['--fleet-child'], { stdio: ['ignore', fd, fd, 'ipc'], execArgv: [] });
  closeSync(fd);
  const waiting = new Map();
  let nextId = 1;
  child.on('message', (message) => {
    waiting.get(message.id)?.(message);
    waiting.delete(message.id);
  });
  child.once('exit', (code) => {
    for (const done of waiting.values()) done({ error: `exited with ${code}` });
  });
  onCleanup(() => child.kill());
  return {
    async ask(op, args = {}) {
      const id = nextId++;
      const answer = await new Promise((done) => {
        waiting.set(id, done);
        child.send({ id, op, ...args });
      });
      if (answer.error !== undefined) throw new Error(`${name} ${op}: ${answer.error}`);
      return answer;
    },
    stop: () => child.kill(),
  };
}

/** Registers `specs` from every client process at once; answers the storm's rate and latencies. */
export async function storm(procs, specs, { urls, hostId, privateJwk, window, sources }) {
  const shares = procs.map((_, k) => specs.filter((s) => s.index % procs.length === k));
  const signing = { hostId, issuer: ISSUER, audience: AUDIENCE, privateJwk };
  await Promise.all(procs.map((c, k) => c.ask('prepare', { ...signing, specs: shares[k] })));
  const parts = await Promise.all(procs.map((c) => c.ask('runtimes', { urls, window, sources })));
  const latencies = parts.flatMap((r) => r.latencies);
  const failures = parts.flatMap((r) => r.failures);
  if (latencies.length !== specs.length) throw new Error(`storm: ${latencies.length} of ${specs.length}: ${failures}`);
  const seconds = (Math.max(...parts.map((r) => r.lastDone)) - Math.min(...parts.map((r) => r.started))) / 1000;
  const retries = parts.reduce((n, r) => n + r.retries, 0);
  return { retries, rate: latencies.length / seconds, latencies };
}

/** What every client process received since the last collect. */
export async function collect(procs) {
  const parts = await Promise.all(procs.map((c) => c.ask('collect')));
  const all = (field) => parts.flatMap((r) => r[field]);
  return { receipts: all('receipts'), strays: all('strays'), discoveries: all('discoveries') };
}

if (process.argv.includes('--fleet-child')) {
  process.on('message', async ({ id, op, ...args }) => {
    try {
      process.send({ id, ...(await ops[op](args)) });
    } catch (error) {
      process.send({ id, error: error.stack ?? String(error) });
    }
  });
  process.on('disconnect', () => process.exit(0));
}
