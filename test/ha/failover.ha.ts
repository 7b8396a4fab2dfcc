import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { setTimeout as delay } from 'node:timers/promises';
import WebSocket from 'ws';
import { freePort, startBuilt, type Spawned } from '../support/processes.js';
import { callers, token } from '../support/tokens.js';
import { Cluster, until } from './cluster.js';

/**
 * DESIGN 15 with the real programs: api and controller replicas on HAProxy in front of a Patroni cluster,
 * under a steady load of tag writes and registrations with a discovery subscriber, through a switchover
 * and a SIGKILL of the primary's postmaster; and DATABASE_URL through PgBouncer in transaction mode with
 * DATABASE_SESSION_URL direct.
 */
const STATEMENT_TIMEOUT_MS = 5000;
/** A request may wait for a connect (HAProxy holds it while no primary is up) and then its statement. */
const MAX_REQUEST_MS = STATEMENT_TIMEOUT_MS + 5000;
const LEASE_MS = 6000;
const run = `${process.pid}-${Date.now().toString(36)}`;

interface Process {
  readonly hostId: string;
  readonly spawned: Spawned;
  readonly url: string;
  readonly wsUrl: string;
}

/** A JSON-RPC socket to a controller; remembers every `discovery/changed` it hears. */
class Rpc {
  readonly heard: { nodes: { runtimeInstanceId: string }[] }[] = [];
  private readonly pending = new Map<number, (frame: Record<string, unknown>) => void>();
  private next = 1;

  private constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const frame = JSON.parse((data as Buffer).toString('utf8')) as Record<string, unknown>;
      if (frame.method === 'discovery/changed') this.heard.push(frame.params as Rpc['heard'][number]);
      else this.pending.get(frame.id as number)?.(frame);
    });
  }

  static async open(process: Process, serviceId: string): Promise<Rpc> {
    const jwt = await token({ sub: 'rt', sid: serviceId, host: process.hostId });
    const url = process.wsUrl;
    const socket = new WebSocket(url, { headers: { authorization: `Bearer ${jwt}` } });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
      socket.once('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: ${res.statusCode}`)));
    });
    return new Rpc(socket);
  }

  call(method: string, params: unknown, timeoutMs = MAX_REQUEST_MS): Promise<Record<string, unknown>> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${method}: no answer in ${timeoutMs} ms`)), timeoutMs);
      this.pending.set(id, (frame) => {
        clearTimeout(timer);
        resolve(frame);
      });
      this.socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  hears(instanceId: string): boolean {
    return this.heard.some((change) => change.nodes.some((n) => n.runtimeInstanceId === instanceId));
  }

  close(): void {
    this.socket.terminate();
  }
}

/** Each check's controllers serve a host of their own: replicas SIGKILLed by an earlier check are not peers. */
async function startProcess(kind: 'api' | 'controller', hostId: string, env: Record<string, string>): Promise<Process> {
  const port = await freePort();
  const spawned = await startBuilt(`apps/${kind}/main.js`, port, {
    ...(kind === 'api' ? { API_PORT: String(port) } : { CONTROLLER_PORT: String(port) }),
    CONTROLLER_HOST_ID: hostId,
    REGISTRY_LEASE_MS: String(LEASE_MS),
    DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
    ...env,
  });
  return { hostId, spawned, url: `http://127.0.0.1:${port}`, wsUrl: `ws://127.0.0.1:${port}/ws/microservice` };
}

/** SIGTERM: a controller releases its lease, so a later check's replicas have no dead peer to reap. */
async function stopAll(processes: readonly Process[]): Promise<void> {
  for (const p of processes) p.spawned.child.kill('SIGTERM');
  await Promise.all(processes.map((p) => p.spawned.exit(15_000)));
}

interface Write {
  readonly tagId: string;
  readonly at: number;
  readonly ms: number;
  readonly status: number;
  readonly retryAfter: string | null;
}

interface Registration {
  readonly at: number;
  readonly ms: number;
  /** The runtimeInstanceId, or the JSON-RPC error code. */
  readonly instanceId?: string;
  readonly code?: number;
}

/** Tag writes through both apis and registrations on controller 0, until `stop()`; every answer recorded. */
function load(apis: readonly Process[], controllers: readonly Process[], serviceId: string, admin: string) {
  const writes: Write[] = [];
  const registrations: Registration[] = [];
  const sockets: Rpc[] = [];
  let running = true;
  let n = 0;
  const writer = async (api: Process): Promise<void> => {
    while (running) {
      const tagName = `${serviceId}-${n++}`;
      const started = Date.now();
      try {
        const response = await fetch(`${api.url}/tags`, {
          method: 'POST',
          headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
          body: JSON.stringify({ tagName }),
          signal: AbortSignal.timeout(MAX_REQUEST_MS + 5000),
        });
        const body = (await response.json().catch(() => ({}))) as { tagId?: string };
        const tagId = body.tagId ?? tagName;
        const retryAfter = response.headers.get('retry-after');
        writes.push({ tagId, at: started, ms: Date.now() - started, status: response.status, retryAfter });
      } catch {
        writes.push({ tagId: tagName, at: started, ms: Date.now() - started, status: 0, retryAfter: null });
      }
      await delay(20);
    }
  };
  const registrar = async (): Promise<void> => {
    let port = 1;
    while (running) {
      const started = Date.now();
      try {
        const rpc = await Rpc.open(controllers[0], serviceId);
        sockets.push(rpc);
        const answer = await rpc.call('service/register', { serviceId, address: '10.9.0.1', port: port++ });
        const result = answer.result as { runtimeInstanceId?: string } | undefined;
        const error = answer.error as { code?: number } | undefined;
        registrations.push({
          at: started,
          ms: Date.now() - started,
          instanceId: result?.runtimeInstanceId,
          code: error?.code,
        });
      } catch {
        registrations.push({ at: started, ms: Date.now() - started, code: 0 });
      }
      await delay(150);
    }
  };
  const done = Promise.all([...apis.flatMap((api) => [writer(api), writer(api)]), registrar()]);
  return {
    writes,
    registrations,
    async stop(): Promise<void> {
      running = false;
      await done;
    },
    closeSockets: () => sockets.forEach((s) => s.close()),
  };
}

/** Readiness of every process, polled until `stop()`: when each last answered 503 and whether it is back. */
function watchReadiness(processes: readonly Process[]) {
  let running = true;
  const notReady: number[] = [];
  const done = (async () => {
    while (running) {
      for (const p of processes) {
        const status = await fetch(`${p.url}/health/ready`, { signal: AbortSignal.timeout(3000) }).then(
          (r) => r.status,
          () => 0,
        );
        if (status !== 200) notReady.push(Date.now());
      }
      await delay(250);
    }
  })();
  return {
    notReady,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

let cluster: Cluster;

beforeAll(async () => {
  cluster = await Cluster.start();
}, 180_000);

afterAll(async () => {
  await cluster?.stop();
}, 60_000);

describe('PgBouncer in transaction mode (DESIGN 15)', () => {
  const processes: Process[] = [];
  const sockets: Rpc[] = [];
  // Also after a failed check: its sockets are closed and its processes stopped, so nothing holds the run.
  afterAll(async () => {
    for (const socket of sockets) socket.close();
    await stopAll(processes);
  });

  it('DATABASE_URL through PgBouncer (DATABASE_POOL_MODE=transaction), DATABASE_SESSION_URL direct: the api starts and serves, a registration on one controller reaches a subscriber on another', async () => {
    const pooled = await cluster.startPgBouncer(STATEMENT_TIMEOUT_MS);
    const env = { DATABASE_URL: pooled, DATABASE_SESSION_URL: cluster.url(), DATABASE_POOL_MODE: 'transaction' };
    // The api applies the migrations (on the session URL) before it is ready.
    processes.push(await startProcess('api', 'h-pgb', env));
    processes.push(await startProcess('controller', 'h-pgb', env), await startProcess('controller', 'h-pgb', env));
    const [api, one, two] = processes as [Process, Process, Process];
    const admin = await callers.admin();
    const created = await fetch(`${api.url}/tags`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tagName: `pgb-${run}` }),
    });
    expect(created.status).toBe(201);
    // Statements outside a transaction carry the pooler's timeout, not a start-up parameter of their own.
    const timeouts = await cluster.query<{ statement_timeout: string }>(pooled, 'show statement_timeout');
    expect(timeouts[0]?.statement_timeout).toBe('5s');
    const serviceId = `pgb-svc-${run}`;
    const subscriber = await Rpc.open(two, serviceId);
    sockets.push(subscriber);
    expect((await subscriber.call('discovery/subscribe', { serviceId })).result).toBeDefined();
    const runtime = await Rpc.open(one, serviceId);
    sockets.push(runtime);
    const answer = await runtime.call('service/register', { serviceId, address: '10.9.1.1', port: 1 });
    const instanceId = (answer.result as { runtimeInstanceId: string }).runtimeInstanceId;
    await until(() => subscriber.hears(instanceId), 'the subscriber on the other controller to hear it', 5000);
    runtime.close();
    subscriber.close();
  }, 120_000);
});

describe.each(['switchover', 'failover'] as const)('%s under load (DESIGN 15)', (kind) => {
  const apis: Process[] = [];
  const controllers: Process[] = [];
  const hostId = `h-${kind}`;
  /** The check's load, readiness watch and subscriber: stopped in afterAll too, should the check fail first. */
  const running: {
    traffic?: ReturnType<typeof load>;
    readiness?: ReturnType<typeof watchReadiness>;
    subscriber?: Rpc;
  } = {};

  beforeAll(async () => {
    await cluster.healthy();
    const env = { DATABASE_URL: cluster.url(), DATABASE_SESSION_URL: '', DATABASE_POOL_MODE: '' };
    apis.push(...(await Promise.all([startProcess('api', hostId, env), startProcess('api', hostId, env)])));
    controllers.push(
      ...(await Promise.all([startProcess('controller', hostId, env), startProcess('controller', hostId, env)])),
    );
    // Reaping needs an unbroken hold of a whole lease first (DESIGN 8.1): let both get there.
    await delay(LEASE_MS);
  }, 120_000);

  afterAll(async () => {
    await running.traffic?.stop();
    running.traffic?.closeSockets();
    await running.readiness?.stop();
    running.subscriber?.close();
    await stopAll([...apis, ...controllers]);
  });

  it('every 2xx write is kept, only 503 + Retry-After meanwhile, nothing hangs, the subscriber hears a registration made in the window, no replica reaped', async () => {
    const admin = await callers.admin();
    const serviceId = `ha-svc-${kind}-${run}`;
    const subscriber = await Rpc.open(controllers[1], serviceId);
    running.subscriber = subscriber;
    expect((await subscriber.call('discovery/subscribe', { serviceId })).result).toBeDefined();
    const readiness = watchReadiness([...apis, ...controllers]);
    running.readiness = readiness;
    const traffic = load(apis, controllers, serviceId, admin);
    running.traffic = traffic;
    await delay(2000);
    const before = await cluster.leader();
    const movedAt = Date.now();
    if (kind === 'switchover') await cluster.switchover();
    else await cluster.killPrimary();
    await until(async () => (await cluster.leader().catch(() => before)) !== before, 'a new leader', 60_000);
    // Load until writes have been accepted again for a while.
    await until(
      () => traffic.writes.filter((w) => w.at > movedAt && w.status === 201).length > 40,
      'writes accepted again',
      60_000,
    );
    await delay(3000);
    await traffic.stop();
    await readiness.stop();

    const { writes, registrations } = traffic;
    const refused = writes.filter((w) => w.status !== 201);
    const firstRefused = refused[0]?.at;
    const firstAccepted =
      firstRefused === undefined ? undefined : writes.find((w) => w.at > firstRefused && w.status === 201)?.at;
    const counts = new Map<number, number>();
    for (const w of writes) counts.set(w.status, (counts.get(w.status) ?? 0) + 1);
    const longest = Math.max(...writes.map((w) => w.ms), ...registrations.map((r) => r.ms));
    process.stdout.write(
      `\n${kind}: window ${firstRefused === undefined ? 'none' : `${(firstAccepted ?? NaN) - firstRefused} ms`} ` +
        `(first refused to first accepted write); writes by status ${JSON.stringify(Object.fromEntries(counts))}; ` +
        `registrations ${registrations.filter((r) => r.instanceId).length} ok, ` +
        `${registrations.filter((r) => !r.instanceId).length} refused (codes ${[...new Set(registrations.map((r) => r.code).filter((c) => c !== undefined))].join(',')}); ` +
        `longest request ${longest} ms; readiness not 200 for ${
          readiness.notReady.length === 0 ? 0 : readiness.notReady.at(-1)! - readiness.notReady[0]
        } ms\n`,
    );

    // Only 503 with Retry-After in the window: no 500, no request without an answer.
    for (const w of refused)
      expect({ status: w.status, retryAfter: w.retryAfter !== null }).toEqual({ status: 503, retryAfter: true });
    expect(longest).toBeLessThan(MAX_REQUEST_MS);
    // Every write answered 201 is on the new primary.
    const acknowledged = writes.filter((w) => w.status === 201).map((w) => w.tagId);
    const present = await cluster.query<{ tag_id: string }>(
      cluster.url(),
      'select tag_id from tag where tag_id = any($1)',
      [acknowledged],
    );
    expect(present.length).toBe(acknowledged.length);
    // A registration refused in the window is retried; the first that succeeds after it reaches the subscriber.
    const firstFailed = registrations.findIndex((r) => r.instanceId === undefined);
    const heard = registrations.slice(Math.max(0, firstFailed)).find((r) => r.instanceId !== undefined);
    expect(heard).toBeDefined();
    await until(
      () => subscriber.hears(heard!.instanceId!),
      'the subscriber to hear the registration made in the window',
      10_000,
    );
    // No replica reaped another: both leases held, no acknowledged instance disconnected, no "reaped" line.
    const leases = await cluster.query<{ n: number }>(
      cluster.url(),
      'select count(*)::int as n from controller_lease where host_id = $1',
      [hostId],
    );
    expect(leases[0]?.n).toBe(2);
    const lost = await cluster.query<{ n: number }>(
      cluster.url(),
      `select count(*)::int as n from runtime_instance where runtime_instance_id = any($1) and status <> 'connected'`,
      [registrations.flatMap((r) => (r.instanceId ? [r.instanceId] : []))],
    );
    expect(lost[0]?.n).toBe(0);
    for (const c of controllers) expect(c.spawned.output()).not.toMatch(/reaped|lease was reaped/);
    // Readiness is back everywhere.
    for (const p of [...apis, ...controllers]) expect((await fetch(`${p.url}/health/ready`)).status).toBe(200);
    traffic.closeSockets();
    subscriber.close();
  }, 240_000);
});
