import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import type { HttpAdapterHost } from '@nestjs/core';
import { ControllerLeaseRepository, ControlSession, RuntimeInstanceRepository } from '#database';
import { loadSettings } from '#platform';
import { openDatabase } from '../../../../test/support/database.js';
import { withTimeout } from '../../../../test/support/wait.js';
import { principalOf } from '#token-binding';
import { RegistryConnection } from '../sessions/connection.js';
import { DiscoveryService } from './discovery.service.js';
import { LeaseService } from '../sessions/lease.service.js';
import { RegistryService } from '../registry.service.js';
import type { LookupParams } from '../dto/lookup.params.js';
import type { ChangedParams, LookupResult } from '../runtime-instance.view.js';

/** The caller the gateway's guards verified: a runtime token without `env`. */
const RUNTIME = principalOf({ sub: 'runtime' });

/** A control session whose notifications never arrive: only a reconnect can tell the service anything. */
class SilentSession {
  private readonly reconnects: (() => void)[] = [];
  listen(): Promise<void> {
    return Promise.resolve();
  }
  onReconnect(handler: () => void): void {
    this.reconnects.push(handler);
  }
  reconnect(): void {
    for (const handler of this.reconnects) handler();
  }
}

/** The registry as DiscoveryService uses it, telling the test each time one of its reads has answered. */
class WatchedLookups {
  answered = 0;
  private readonly waiters = new Set<() => void>();

  constructor(private readonly inner: RegistryService) {}

  get hostId(): string {
    return this.inner.hostId;
  }

  async lookup(params: LookupParams): Promise<LookupResult> {
    const result = await this.inner.lookup(params);
    this.answered += 1;
    for (const waiter of this.waiters) waiter();
    return result;
  }

  /**
   * Resolves once `count` reads have answered and the service has acted on the last (it sends in the same
   * turn it gets the answer, and a setImmediate runs only after that turn's promise callbacks).
   */
  async until(count: number): Promise<void> {
    while (this.answered < count) {
      await new Promise<void>((resolve) => {
        const waiter = (): void => {
          this.waiters.delete(waiter);
          resolve();
        };
        this.waiters.add(waiter);
      });
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const host = `h-${Math.random().toString(36).slice(2, 8)}`;
const settings = loadSettings({ CONTROLLER_HOST_ID: host, REGISTRY_LEASE_MS: '600000' });
let db: DataSource;
let session: ControlSession;
let lease: LeaseService;
let registry: RegistryService;

beforeAll(async () => {
  db = await openDatabase();
  session = new ControlSession(
    process.env.DATABASE_SESSION_URL || (process.env.DATABASE_URL ?? ''),
    'bindery-discovery-test',
  );
  const noHttp = { httpAdapter: undefined } as unknown as HttpAdapterHost;
  lease = new LeaseService(new ControllerLeaseRepository(session), settings, noHttp);
  await lease.onModuleInit();
  registry = new RegistryService(new RuntimeInstanceRepository(db), lease, settings);
});
afterAll(async () => {
  await lease.release();
  await session.close();
  await db.destroy();
});

describe('DiscoveryService', () => {
  it('after its session reconnects it re-reads every subscribed set: a change whose notification was lost still arrives', async () => {
    const silent = new SilentSession();
    const lookups = new WatchedLookups(registry);
    const discovery = new DiscoveryService(lookups as unknown as RegistryService, silent as unknown as ControlSession);
    await discovery.onModuleInit();
    const watcher = new RegistryConnection(undefined);
    const sent: ChangedParams[] = [];
    const answer = await discovery.subscribe(watcher, { serviceId: 'lost-svc' }, (params) => sent.push(params));
    expect(answer.nodes).toEqual([]);

    // A registration whose notification this controller never sees (its session was down).
    const runtime = new RegistryConnection(undefined);
    const { runtimeInstanceId } = await registry.register(
      runtime,
      {
        serviceId: 'lost-svc',
        address: '10.2.0.1',
        port: 1,
      },
      RUNTIME,
    );
    // Nothing can tell it: its session is silent, and it read nothing since the subscribe answer.
    expect(lookups.answered).toBe(1);
    expect(sent).toEqual([]);

    silent.reconnect();
    await withTimeout(lookups.until(2), 'the re-read after the reconnect');
    expect(sent).toEqual([
      {
        subscriptionId: answer.subscriptionId,
        serviceId: 'lost-svc',
        envTag: null,
        nodes: [expect.objectContaining({ runtimeInstanceId })],
      },
    ]);
    // A second reconnect with nothing new sends nothing: only differing sets are sent.
    silent.reconnect();
    await withTimeout(lookups.until(3), 'the re-read after the second reconnect');
    expect(sent).toHaveLength(1);
    discovery.closed(watcher);
    expect(discovery.size).toBe(0);
  });
});

describe('ControlSession', () => {
  it('reconnects by itself when its session is killed, tells its listeners, and listens again', async () => {
    const name = `bindery-control-${Math.random().toString(36).slice(2, 8)}`;
    // The session's own connection: in CI's PgBouncer run DATABASE_URL is the pooler (DESIGN 15).
    const control = new ControlSession(process.env.DATABASE_SESSION_URL || (process.env.DATABASE_URL ?? ''), name);
    const payloads: string[] = [];
    let reconnected = 0;
    let reconnect = (): void => undefined;
    const reconnectedOnce = new Promise<void>((resolve) => (reconnect = resolve));
    control.onReconnect(() => {
      reconnected += 1;
      reconnect();
    });
    let arrived = (): void => undefined;
    const notified = new Promise<void>((resolve) => (arrived = resolve));
    try {
      await control.listen('bindery_test_channel', (payload) => {
        payloads.push(payload);
        arrived();
      });
      await db.query(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1`, [name]);
      await withTimeout(reconnectedOnce, 'the session to reconnect');
      expect(reconnected).toBe(1);
      await db.query(`select pg_notify('bindery_test_channel', 'after')`);
      await withTimeout(notified, 'the notification after the reconnect');
      expect(payloads).toEqual(['after']);
    } finally {
      await control.close();
    }
  });
});
