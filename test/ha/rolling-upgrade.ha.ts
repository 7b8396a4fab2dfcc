import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { freePort, startBuilt, type Spawned } from '../support/processes.js';
import {
  previousRelease,
  PREVIOUS_RELEASE_BUILD_MS,
  startRelease,
  type PreviousRelease,
} from '../support/previous-release.js';
import { addProbeColumn } from '../support/schema-change.js';
import { callers, token } from '../support/tokens.js';
import { Cluster, until } from './cluster.js';
import { Balancer, refused, Rpc, send, Subscriber, unavailable, type Answer } from './upgrade-support.js';

/**
 * DESIGN 15's rolling upgrade on the reference HA setup: two api replicas and two controllers of the previous
 * release are replaced one at a time (SIGTERM, then the current build) with the expand migration applied
 * after the first api, while tag writes go through both apis and runtimes register on the controllers with
 * a discovery subscriber watching. Every 2xx write is kept, every acknowledged registration stays or was
 * superseded by the runtime registering again after its controller went away, and nothing answers but
 * 2xx or 503 with Retry-After.
 */
const run = `${process.pid}-${Date.now().toString(36)}`;
const HOST = `h-roll-${run}`;
const SERVICE = `svc-roll-${run}`;
const GOING_AWAY = 1001;

interface Replica {
  readonly kind: 'api' | 'controller';
  readonly release: 'previous' | 'current';
  readonly spawned: Spawned;
  readonly url: string;
  readonly ws: string;
}
interface Write {
  readonly at: number;
  readonly tagId: string;
  readonly status: number;
  readonly retryAfter: boolean;
  readonly replica: string;
}
/** One `service/register` sent: its answer, and how its socket ended. */
interface Registration {
  readonly runtime: number;
  readonly replica: string;
  instanceId?: string;
  closedWith?: number;
}

let cluster: Cluster;
let release: PreviousRelease;
const replicas: Replica[] = [];
const name = (r: Replica | undefined): string => (r === undefined ? 'none' : `${r.release} ${r.kind} ${r.url}`);

async function startReplica(kind: Replica['kind'], which: Replica['release']): Promise<Replica> {
  const port = await freePort();
  const env = {
    DATABASE_URL: cluster.url(),
    CONTROLLER_HOST_ID: HOST,
    DB_STATEMENT_TIMEOUT_MS: '5000',
    [kind === 'api' ? 'API_PORT' : 'CONTROLLER_PORT']: String(port),
  };
  const main = kind === 'api' ? release.apiMain : release.controllerMain;
  const spawned =
    which === 'current'
      ? await startBuilt(`apps/${kind}/main.js`, port, env)
      : await startRelease(main, port, { ...env, LOG_LEVEL: 'warn' });
  const url = `http://127.0.0.1:${port}`;
  replicas.push({ kind, release: which, spawned, url, ws: `ws://127.0.0.1:${port}/ws/microservice` });
  return replicas.at(-1)!;
}

beforeAll(async () => {
  [release, cluster] = await Promise.all([previousRelease(), Cluster.start()]);
}, PREVIOUS_RELEASE_BUILD_MS + 180_000);

afterAll(async () => {
  for (const r of replicas) r.spawned.child.kill('SIGTERM');
  await Promise.all(replicas.map((r) => r.spawned.exit(15_000)));
  await cluster?.stop();
}, 60_000);

/** Three tag writers on the api balancer; a new runtime every 250 ms on the controller balancer. */
function traffic(apis: Balancer<Replica>, controllers: Balancer<Replica>, admin: string, jwt: string) {
  const writes: Write[] = [];
  const registrations: Registration[] = [];
  const failures: string[] = [];
  const sockets = new Set<Rpc>();
  const inFlight = new Set<Promise<unknown>>();
  const runtimes: Promise<void>[] = [];
  let running = true;
  let n = 0;
  const writer = async (): Promise<void> => {
    for (let tagName = `${SERVICE}-${n++}`; running; tagName = `${SERVICE}-${n++}`) {
      const at = Date.now();
      const headers = { authorization: `Bearer ${admin}`, 'content-type': 'application/json' };
      const body = JSON.stringify({ tagName });
      const answer = await apis
        .route((api) => send(`${api.url}/tags`, { method: 'POST', headers, body }))
        .catch((error: Error) => {
          failures.push(`write without an answer (${(error as { code?: string }).code}): ${error.message}`);
          return undefined;
        });
      const none: Answer = { status: 0, headers: {}, text: '' };
      const { value, member } = answer ?? { value: none, member: undefined };
      const tagId = (JSON.parse(value.text || '{}') as { tagId?: string }).tagId ?? tagName;
      const retryAfter = value.headers['retry-after'] !== undefined;
      writes.push({ at, tagId, status: value.status, retryAfter, replica: member?.url ?? '' });
      if (answer !== undefined && value.status !== 201 && !(value.status === 503 && retryAfter))
        failures.push(`write ${value.status} from ${name(member)}: ${value.text.slice(0, 200)}`);
    }
  };
  /** A runtime: registers, keeps its socket, and registers again elsewhere when its controller goes away. */
  const runtime = async (port: number): Promise<void> => {
    while (running) {
      let opened: { value: Rpc; member: Replica } | undefined;
      try {
        opened = await controllers.route(
          (c) => Rpc.open(c.ws, jwt),
          (e) => refused(e) || unavailable(e),
        );
      } catch (error) {
        if (!unavailable(error)) failures.push(`runtime ${port}: no controller: ${String(error)}`);
      }
      // Turned away (503, or a failure recorded above): a runtime backs off and tries again.
      if (opened === undefined) {
        await delay(200);
        continue;
      }
      const { value: socket, member } = opened;
      if (!running) return socket.close();
      sockets.add(socket);
      const call = socket.call('service/register', { serviceId: SERVICE, address: '10.7.0.1', port });
      inFlight.add(call);
      const answer = await call.catch(() => undefined);
      inFlight.delete(call);
      const registration: Registration = { runtime: port, replica: member.url };
      registration.instanceId = answer?.result?.runtimeInstanceId as string | undefined;
      registrations.push(registration);
      const error = answer?.error;
      if (error !== undefined && !(error.code === -32004 && error.data?.retryAfterSec !== undefined))
        failures.push(`register on ${name(member)}: ${JSON.stringify(error)}`);
      const closedWith = await socket.closed;
      sockets.delete(socket);
      // Closed by the test at the end: the registration is still held.
      if (!running) return;
      registration.closedWith = closedWith;
      // A controller going away says 1001; anything else (1012: reaped, 1006: dropped) is a failure.
      if (closedWith !== GOING_AWAY)
        return void failures.push(`runtime ${port} on ${name(member)}: closed ${closedWith}`);
    }
  };
  const spawner = (async () => {
    for (let port = 1; running; port++) {
      runtimes.push(runtime(port));
      await delay(250);
    }
  })();
  const done = Promise.all([writer(), writer(), writer(), spawner]);
  return {
    writes,
    registrations,
    failures,
    /** No new request; every one sent is answered. The runtimes keep their sockets (and registrations). */
    async stop(): Promise<void> {
      running = false;
      await done;
      await Promise.allSettled([...inFlight]);
    },
    async hangUp(): Promise<void> {
      for (const s of sockets) s.close();
      await Promise.all(runtimes);
    },
  };
}

type Load = ReturnType<typeof traffic>;
let load: Load;
let watcher: Subscriber;
const steps: string[] = [];

/** The upgrade itself, under load; the checks below judge what it recorded. */
async function rollingUpgrade(): Promise<void> {
  // The previous release's first api migrates the empty database, as it did in production.
  const oldApis = [await startReplica('api', 'previous')];
  oldApis.push(await startReplica('api', 'previous'));
  const oldControllers = [await startReplica('controller', 'previous'), await startReplica('controller', 'previous')];
  const apis = new Balancer([...oldApis]);
  const controllers = new Balancer([...oldControllers]);
  const jwt = await token({ sub: 'rt-roll', host: HOST, sid: SERVICE });
  watcher = new Subscriber(controllers, SERVICE, jwt);
  load = traffic(apis, controllers, await callers.admin(), jwt);
  const accepted = (replica: Replica, after = 0): number =>
    load.writes.filter((w) => w.replica === replica.url && w.status === 201 && w.at >= after).length;
  const registered = (replica: Replica): number =>
    load.registrations.filter((r) => r.replica === replica.url && r.instanceId !== undefined).length;
  const busy = (after: number) => (r: Replica) => (r.kind === 'api' ? accepted(r, after) >= 10 : registered(r) >= 3);
  await until(() => [...oldApis, ...oldControllers].every(busy(0)), 'traffic on the old release', 30_000);
  // As docs/deploy.md says: a new replica joins and serves, then an old one gets SIGTERM and, once it has
  // exited, leaves the rotation (until then the balancer's requests to it are refused and go elsewhere).
  const replace = async (old: Replica, balancer: Balancer<Replica>): Promise<void> => {
    const started = Date.now();
    const next = await startReplica(old.kind, 'current');
    balancer.add(next);
    await until(() => busy(0)(next), `${name(next)} to serve`, 30_000);
    // Out of the rotation first, as a load balancer (or Kubernetes' endpoints, with a preStop pause) takes it:
    // closing a listening socket resets connections still in its accept queue, whatever the process does.
    balancer.remove(old);
    old.spawned.child.kill('SIGTERM');
    // Graceful: in-flight requests finish, sockets get 1001, the lease is released; exit 0.
    const exit = await old.spawned.exit(30_000);
    if (exit !== 0) load.failures.push(`${name(old)} exited ${exit} at SIGTERM`);
    steps.push(`${old.kind} replaced in ${Date.now() - started} ms`);
  };
  await replace(oldApis[0], apis);
  // The expand step under load, while the other api still runs the previous release.
  const migratedAt = Date.now();
  const touched = await addProbeColumn(cluster.url());
  steps.push(`expand migration of ${touched.length} tables in ${Date.now() - migratedAt} ms`);
  await until(() => accepted(oldApis[1], migratedAt) >= 20, 'the old api writing after the migration', 30_000);
  await replace(oldApis[1], apis);
  for (const old of oldControllers) await replace(old, controllers);
  const settledAt = Date.now();
  await until(() => apis.members.every(busy(settledAt)), 'writes on both new apis', 30_000);
  // The next upgrade: this build's replicas replaced by this build, so its own shutdown is judged too.
  for (const current of [...apis.members, ...controllers.members]) {
    await replace(current, current.kind === 'api' ? apis : controllers);
  }
  const restartedAt = Date.now();
  await until(() => apis.members.every(busy(restartedAt)), 'writes on the restarted apis', 30_000);
  await load.stop();
  const byStatus: Record<number, number> = {};
  for (const w of load.writes) byStatus[w.status] = (byStatus[w.status] ?? 0) + 1;
  const acked = load.registrations.filter((r) => r.instanceId).length;
  process.stdout.write(
    `\nrolling upgrade: ${steps.join('; ')}; writes by status ${JSON.stringify(byStatus)}; ` +
      `registrations ${acked} acknowledged of ${load.registrations.length}; subscriber moved ${watcher.closes.length} times\n`,
  );
}

describe('rolling upgrade from the previous release to this build under load (DESIGN 15)', () => {
  beforeAll(rollingUpgrade, 300_000);
  // Also when the upgrade failed half-way: the load stops before the replicas do.
  afterAll(async () => {
    await load?.stop();
    await load?.hangUp();
    await watcher?.stop();
  });

  it('every write answered 201 is in the database', async () => {
    const acknowledged = load.writes.filter((w) => w.status === 201).map((w) => w.tagId);
    expect(acknowledged.length).toBeGreaterThan(100);
    const sql = 'select tag_id from tag where tag_id = any($1)';
    expect((await cluster.query(cluster.url(), sql, [acknowledged])).length).toBe(acknowledged.length);
  });

  it('every acknowledged registration is stored, and connected unless its controller went away (1001)', async () => {
    const acked = load.registrations.filter((r) => r.instanceId !== undefined);
    const rows = await cluster.query<{ id: string; status: string }>(
      cluster.url(),
      'select runtime_instance_id as id, status from runtime_instance where runtime_instance_id = any($1)',
      [acked.map((r) => r.instanceId)],
    );
    const status = new Map(rows.map((row) => [row.id, row.status]));
    expect(acked.filter((r) => !status.has(r.instanceId ?? ''))).toEqual([]);
    // Superseded legitimately: its socket was closed 1001 and the runtime registered again elsewhere.
    const open = acked.filter((r) => r.closedWith === undefined);
    expect(open.filter((r) => status.get(r.instanceId ?? '') !== 'connected')).toEqual([]);
    expect(acked.filter((r) => r.closedWith !== undefined && r.closedWith !== GOING_AWAY)).toEqual([]);
  });

  it('the subscriber, moved from controller to controller, ends knowing exactly the connected set', async () => {
    const connected = async (): Promise<string[]> => {
      const rows = await cluster.query<{ id: string }>(
        cluster.url(),
        `select runtime_instance_id as id from runtime_instance
          where service_id = $1 and host_id = $2 and status = 'connected'`,
        [SERVICE, HOST],
      );
      return rows.map((row) => row.id).sort();
    };
    const same = async (): Promise<boolean> => JSON.stringify(await connected()) === JSON.stringify(watcher.known());
    // Notifications may still be on their way: wait for them, then compare (a failure shows the difference).
    await until(same, 'the subscriber to know the connected set', 15_000).catch(() => undefined);
    expect(watcher.known()).toEqual(await connected());
  });

  it('nothing answered but 2xx or 503 with Retry-After, no request went unanswered, every replica exited 0', () => {
    const unanswered = load.registrations.filter((r) => r.instanceId === undefined && r.closedWith !== GOING_AWAY);
    expect(unanswered).toEqual([]);
    // 0.44 answered a request that reached it after SIGTERM with Fastify's bare 503 (no Retry-After): fixed
    // in this build, whose own restarts (the second round) must show none; tolerated from 0.44 alone.
    const bare503 = (failure: string): boolean =>
      /^write 503 from previous api /.test(failure) && failure.includes('"error":"Service Unavailable"');
    expect([...load.failures.filter((f) => !bare503(f)), ...watcher.failures]).toEqual([]);
  });
});
