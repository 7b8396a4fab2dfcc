import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { randomUUID } from 'node:crypto';
import type { HttpAdapterHost } from '@nestjs/core';
import { ControllerLeaseRepository, ControlSession, RuntimeInstanceRepository } from '#database';
import { loadSettings } from '#platform';
import { openDatabase } from '../../../test/support/database.js';
import { JsonRpcError } from '../jsonrpc/jsonrpc.js';
import { principalOf } from '#token-binding';
import { RegistryConnection } from './sessions/connection.js';
import { LeaseService } from './sessions/lease.service.js';
import { LOOKUP_MAX_NODES, MAX_REGISTRATIONS_PER_SOCKET, RegistryService } from './registry.service.js';

/** The caller the gateway's guards verified: a runtime token without `env`. */
const RUNTIME = principalOf({ sub: 'runtime' });

let db: DataSource;
let session: ControlSession;
let registry: RegistryService;
const host = `h-${Math.random().toString(36).slice(2, 8)}`;
/** Leases long enough that only the ticks a test drives by hand renew or reap. */
const LONG_LEASE = { CONTROLLER_HOST_ID: host, REGISTRY_LEASE_MS: '600000' };
const noHttp = { httpAdapter: undefined } as unknown as HttpAdapterHost;
const leases: LeaseService[] = [];

async function startLease(env: Record<string, string> = LONG_LEASE): Promise<LeaseService> {
  const lease = new LeaseService(new ControllerLeaseRepository(session), loadSettings(env), noHttp);
  await lease.onModuleInit();
  leases.push(lease);
  return lease;
}

/** One renewal (and, when due, reaping) of `lease`, as its timer would run it. */
const tick = (lease: LeaseService): Promise<void> => (lease as unknown as { tick(): Promise<void> }).tick();

beforeAll(async () => {
  db = await openDatabase();
  session = new ControlSession(
    process.env.DATABASE_SESSION_URL || (process.env.DATABASE_URL ?? ''),
    'bindery-lease-test',
  );
  registry = new RegistryService(new RuntimeInstanceRepository(db), await startLease(), loadSettings(LONG_LEASE));
});
afterAll(async () => {
  for (const lease of leases) await lease.release();
  await session.close();
  await db.destroy();
});

const statusOf = async (id: string): Promise<string | undefined> =>
  (await db.query<{ status: string }[]>('select status from runtime_instance where runtime_instance_id = $1', [id]))[0]
    ?.status;

describe('RegistryService rules over RuntimeInstanceRepository (real database)', () => {
  it('only the registering connection may deregister: another one gets -32003 and the row stays connected', async () => {
    const owner = new RegistryConnection(undefined);
    const { runtimeInstanceId } = await registry.register(
      owner,
      { serviceId: 'svc', address: '10.0.0.1', port: 80 },
      RUNTIME,
    );
    const stranger = new RegistryConnection(undefined);
    await expect(registry.deregister(stranger, runtimeInstanceId)).rejects.toMatchObject({ code: -32003 });
    await expect(registry.deregister(stranger, runtimeInstanceId)).rejects.toBeInstanceOf(JsonRpcError);
    expect(await statusOf(runtimeInstanceId)).toBe('connected');
    await registry.deregister(owner, runtimeInstanceId);
    expect(await statusOf(runtimeInstanceId)).toBe('deregistered');
  });

  it("a stale connection's close does not disconnect a newer registration of the same instance", async () => {
    const first = new RegistryConnection(undefined);
    const params = { serviceId: 'svc', address: '10.0.0.2', port: 81 };
    const { runtimeInstanceId } = await registry.register(first, params, RUNTIME);
    const second = new RegistryConnection(undefined);
    expect((await registry.register(second, params, RUNTIME)).runtimeInstanceId).toBe(runtimeInstanceId);
    expect(await registry.markDisconnected(first.id, [runtimeInstanceId])).toBe(0);
    expect(await statusOf(runtimeInstanceId)).toBe('connected');
    expect(await registry.markDisconnected(second.id, [runtimeInstanceId])).toBe(1);
    expect(await statusOf(runtimeInstanceId)).toBe('disconnected');
  });

  it(`refuses a registration beyond ${MAX_REGISTRATIONS_PER_SOCKET} on one socket with -32602`, async () => {
    const connection = new RegistryConnection(undefined);
    for (let port = 1; port <= MAX_REGISTRATIONS_PER_SOCKET; port++) {
      await registry.register(connection, { serviceId: 'cap', address: '10.7.0.1', port }, RUNTIME);
    }
    await expect(
      registry.register(connection, { serviceId: 'cap', address: '10.7.0.2', port: 1 }, RUNTIME),
    ).rejects.toMatchObject({
      code: -32602,
      data: { errors: [{ field: 'serviceId', message: 'at most 100 registrations per connection' }] },
    });
    expect(connection.instances.size).toBe(MAX_REGISTRATIONS_PER_SOCKET);
    // Registering one it holds again adds none (DESIGN 8: same identity, same runtimeInstanceId).
    const again = await registry.register(connection, { serviceId: 'cap', address: '10.7.0.1', port: 7 }, RUNTIME);
    expect([...connection.instances]).toContain(again.runtimeInstanceId);
    expect(connection.instances.size).toBe(MAX_REGISTRATIONS_PER_SOCKET);
    // One another socket holds is not this socket's: it would be a 101st here.
    const other = new RegistryConnection(undefined);
    await registry.register(other, { serviceId: 'cap', address: '10.7.0.3', port: 1 }, RUNTIME);
    await expect(
      registry.register(connection, { serviceId: 'cap', address: '10.7.0.3', port: 1 }, RUNTIME),
    ).rejects.toMatchObject({ code: -32602 });
  });
});

describe('the controller lease (database clock)', () => {
  const leaseOf = async (id: string) =>
    (
      await db.query<{ n: number }[]>('select count(*)::int as n from controller_lease where controller_id = $1', [id])
    )[0]?.n;

  /** An instance row held by `controllerId`, as its registration would have written it. */
  async function heldBy(controllerId: string): Promise<string> {
    const id = `L${randomUUID().replace(/-/g, '').slice(0, 20)}`;
    await db.query(
      `insert into runtime_instance (runtime_instance_id, host_id, service_id, address, port, status, controller_id)
       values ($1, $2, 'lease-svc', $3, 1, 'connected', $4)`,
      [id, host, id, controllerId],
    );
    return id;
  }

  /** A replica that stopped renewing `agoMs` before its lease ran out. */
  async function deadReplica(agoMs: number): Promise<{ controllerId: string; instance: string }> {
    const controllerId = randomUUID();
    await db.query(
      `insert into controller_lease (controller_id, host_id, held_since_ts, renewed_ts, expires_ts)
       values ($1, $2, now() - interval '1 hour', now() - $3 * interval '1 ms', now() - $3 * interval '1 ms')`,
      [controllerId, host, agoMs],
    );
    return { controllerId, instance: await heldBy(controllerId) };
  }

  it('a replica held without a gap for a whole lease reaps an expired one and the instances it held', async () => {
    const survivor = await startLease();
    const dead = await deadReplica(1000);
    // Just started: it has not held its lease for a whole REGISTRY_LEASE_MS yet, so it may not reap.
    await tick(survivor);
    expect(await statusOf(dead.instance)).toBe('connected');
    await db.query(
      `update controller_lease set held_since_ts = now() - interval '11 minutes' where controller_id = $1`,
      [survivor.controllerId],
    );
    await tick(survivor);
    expect(await statusOf(dead.instance)).toBe('disconnected');
    expect(await leaseOf(dead.controllerId)).toBe(0);
  });

  it('after a database outage longer than the lease, live replicas renew and never reap each other', async () => {
    const a = await startLease();
    const b = await startLease();
    const held = await heldBy(b.controllerId);
    // Neither renewed during the outage: both leases ran out, though both held them for long before.
    await db.query(
      `update controller_lease set held_since_ts = now() - interval '1 hour', renewed_ts = now() - interval '20 minutes',
         expires_ts = now() - interval '10 minutes' where controller_id = any($1)`,
      [[a.controllerId, b.controllerId]],
    );
    // The database is back and `a` ticks first: it renews, but its unbroken hold starts again now.
    await tick(a);
    expect(await leaseOf(b.controllerId)).toBe(1);
    expect(await statusOf(held)).toBe('connected');
    await tick(b);
    await tick(a);
    expect(await statusOf(held)).toBe('connected');
  });

  it('a replica that finds its lease reaped takes a new one and tells its sockets to reconnect', async () => {
    const lease = await startLease();
    let lost = 0;
    lease.onLost(() => (lost += 1));
    await db.query('delete from controller_lease where controller_id = $1', [lease.controllerId]);
    await tick(lease);
    expect(lost).toBe(1);
    expect(await leaseOf(lease.controllerId)).toBe(1);
  });

  it('at start, instances whose holder has no lease are disconnected; a live holder keeps its own', async () => {
    const live = await startLease();
    const kept = await heldBy(live.controllerId);
    const orphan = await heldBy(randomUUID());
    await startLease();
    expect(await statusOf(orphan)).toBe('disconnected');
    expect(await statusOf(kept)).toBe('connected');
  });

  it('a process restarted on the same endpoint reaps its predecessor at once', async () => {
    const repository = new ControllerLeaseRepository(session);
    const before = await startLease();
    const endpoint = `test-host-${randomUUID()}:8081`;
    await repository.claimEndpoint(before.controllerId, endpoint);
    const held = await heldBy(before.controllerId);
    const after = await startLease();
    expect(await repository.claimEndpoint(after.controllerId, endpoint)).toEqual({ controllers: 1, instances: 1 });
    expect(await statusOf(held)).toBe('disconnected');
  });

  it('a clean release removes the lease and disconnects what it held, in one statement', async () => {
    const lease = await startLease();
    const held = await heldBy(lease.controllerId);
    expect(await lease.release()).toBe(1);
    expect(await statusOf(held)).toBe('disconnected');
    expect(await leaseOf(lease.controllerId)).toBe(0);
  });

  it('a release during a renewal in flight leaves no lease behind (the renewal does not take a new one)', async () => {
    const lease = await startLease();
    let lost = 0;
    lease.onLost(() => (lost += 1));
    // The tick's renewal is sent after a turn; release's delete goes first, as at a shutdown mid-tick.
    const renewing = tick(lease);
    await lease.release();
    await renewing;
    expect(await leaseOf(lease.controllerId)).toBe(0);
    expect(lost).toBe(0);
  });

  it('closes in one turn of the event loop are one statement each 200 connections, each counted once', async () => {
    const repository = new RuntimeInstanceRepository(db);
    const statements: number[] = [];
    const disconnect = repository.disconnect.bind(repository);
    repository.disconnect = (closed) => (statements.push(closed.length), disconnect(closed));
    const batched = new RegistryService(repository, await startLease(), loadSettings(LONG_LEASE));
    const connections = Array.from({ length: 250 }, () => new RegistryConnection(undefined));
    const ids = await Promise.all(
      connections.map(async (c, n) => {
        const params = { serviceId: 'svc-batch', address: `10.9.${n >> 8}.${n & 255}`, port: 80 };
        return (await batched.register(c, params, RUNTIME)).runtimeInstanceId;
      }),
    );
    const [first, ...rest] = connections.map((c, n) => batched.markDisconnected(c.id, [ids[n] ?? '']));
    // The first connection named twice: its instance counts for one of the two.
    const counts = await Promise.all([
      first,
      batched.markDisconnected(connections[0]?.id ?? '', [ids[0] ?? '']),
      ...rest,
    ]);
    expect(statements).toEqual([200, 51]);
    expect(counts.reduce((a, b) => a + b, 0)).toBe(250);
    const rows = await db.query<{ status: string; n: number }[]>(
      `select status, count(*)::int as n from runtime_instance where runtime_instance_id = any($1) group by status`,
      [ids],
    );
    expect(rows).toEqual([{ status: 'disconnected', n: 250 }]);
  });

  it('discovery/lookup lists at most LOOKUP_MAX_NODES nodes and says when it cut the list', async () => {
    const serviceId = `many-${randomUUID().slice(0, 8)}`;
    const insert = (from: number, to: number) =>
      db.query(
        `insert into runtime_instance (runtime_instance_id, host_id, service_id, address, port, status, controller_id)
         select $3 || '-' || n, $1, $2, '10.1.0.1', n, 'connected', $6 from generate_series($4::int, $5::int) n`,
        [host, serviceId, serviceId.slice(5), from, to, registry.controllerId],
      );
    await insert(1, LOOKUP_MAX_NODES);
    const full = await registry.lookup({ serviceId });
    expect(full.nodes).toHaveLength(LOOKUP_MAX_NODES);
    expect(full).not.toHaveProperty('truncated');
    await insert(LOOKUP_MAX_NODES + 1, LOOKUP_MAX_NODES + 1);
    const cut = await registry.lookup({ serviceId });
    expect(cut.nodes).toHaveLength(LOOKUP_MAX_NODES);
    expect(cut.truncated).toBe(true);
  });
});
