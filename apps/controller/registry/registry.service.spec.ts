import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { randomUUID } from 'node:crypto';
import { LEASE_KEY, RuntimeInstanceRepository } from '#database';
import { loadSettings } from '#platform';
import { openDatabase } from '../../../test/support/database.js';
import { JsonRpcError } from '../jsonrpc/jsonrpc.js';
import { RegistryConnection } from './connection.js';
import { LOOKUP_MAX_NODES, RegistryService } from './registry.service.js';

let db: DataSource;
let registry: RegistryService;
const host = `h-${Math.random().toString(36).slice(2, 8)}`;

beforeAll(async () => {
  db = await openDatabase();
  registry = new RegistryService(new RuntimeInstanceRepository(db), loadSettings({ CONTROLLER_HOST_ID: host }));
  await registry.onModuleInit();
});
afterAll(async () => {
  await registry.releaseAll();
  await db.destroy();
});

const statusOf = async (id: string): Promise<string | undefined> =>
  (await db.query<{ status: string }[]>('select status from runtime_instance where runtime_instance_id = $1', [id]))[0]
    ?.status;

describe('RegistryService rules over RuntimeInstanceRepository (real database)', () => {
  it('only the registering connection may deregister: another one gets -32003 and the row stays connected', async () => {
    const owner = new RegistryConnection(undefined);
    const { runtimeInstanceId } = await registry.register(owner, { serviceId: 'svc', address: '10.0.0.1', port: 80 });
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
    const { runtimeInstanceId } = await registry.register(first, params);
    const second = new RegistryConnection(undefined);
    expect((await registry.register(second, params)).runtimeInstanceId).toBe(runtimeInstanceId);
    expect(await registry.markDisconnected(first.id, [runtimeInstanceId])).toBe(0);
    expect(await statusOf(runtimeInstanceId)).toBe('connected');
    expect(await registry.markDisconnected(second.id, [runtimeInstanceId])).toBe(1);
    expect(await statusOf(runtimeInstanceId)).toBe('disconnected');
  });
});

describe('the controller lease', () => {
  /** Holds the lease lock of `controllerId` from another session, as a colliding live controller would. */
  async function holdLock(controllerId: string): Promise<() => Promise<void>> {
    const runner = db.createQueryRunner();
    await runner.connect();
    await runner.query('select pg_advisory_lock($1, hashtext($2))', [LEASE_KEY, controllerId]);
    return async () => {
      await runner.query('select pg_advisory_unlock($1, hashtext($2))', [LEASE_KEY, controllerId]);
      await runner.release();
    };
  }

  it('taking a lock held elsewhere is reported, not ignored', async () => {
    const repository = new RuntimeInstanceRepository(db);
    const id = randomUUID();
    const release = await holdLock(id);
    try {
      expect(await repository.acquireLease(id)).toBeNull();
    } finally {
      await release();
    }
    const lease = await repository.acquireLease(id);
    expect(lease).not.toBeNull();
    await lease?.release();
  });

  it('a service whose id collides starts with another id and holds its lease', async () => {
    const service = new RegistryService(new RuntimeInstanceRepository(db), loadSettings({ CONTROLLER_HOST_ID: host }));
    const first = service.controllerId;
    const release = await holdLock(first);
    try {
      await service.onModuleInit();
      expect(service.controllerId).not.toBe(first);
      const [held] = await db.query<{ n: number }[]>(
        `select count(*)::int as n from pg_locks where locktype = 'advisory' and granted and classid = $1
           and objid = hashtext($2)::oid`,
        [LEASE_KEY, service.controllerId],
      );
      expect(held?.n).toBe(1);
    } finally {
      await service.releaseAll();
      await release();
    }
  });

  it('discovery/lookup lists at most LOOKUP_MAX_NODES nodes and says when it cut the list', async () => {
    const serviceId = `many-${randomUUID().slice(0, 8)}`;
    const insert = (from: number, to: number) =>
      db.query(
        `insert into runtime_instance (runtime_instance_id, host_id, service_id, address, port, status, controller_id)
         select $3 || '-' || n, $1, $2, '10.1.0.1', n, 'connected', gen_random_uuid() from generate_series($4::int, $5::int) n`,
        [host, serviceId, serviceId.slice(5), from, to],
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
