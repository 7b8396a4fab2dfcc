import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { RuntimeInstanceRepository, type Lease } from '#database';
import { newId, SETTINGS, type Settings } from '#platform';
import type { RegistryConnection } from './connection.js';
import type { ListInstancesQuery } from './dto/list-instances.query.js';
import type { LookupParams } from './dto/lookup.params.js';
import type { RegisterParams } from './dto/register.params.js';
import { forbidden, NOT_OWNER_MESSAGE } from './registry.errors.js';
import {
  toInstanceView,
  toNodeView,
  type DeregisterResult,
  type InstancePage,
  type LookupResult,
  type RegisterResult,
} from './runtime-instance.view.js';

const PG_UNDEFINED_TABLE = '42P01';

/**
 * The registry of runtime instances (DESIGN 8). The gateway's guards decided the token and the binding
 * before any method here runs; the database's identity constraint is the only duplicate check.
 */
/** Nodes one `discovery/lookup` answer lists at most (the longest-connected first). */
export const LOOKUP_MAX_NODES = 1000;

@Injectable()
export class RegistryService implements OnModuleInit {
  /** This controller process; rows it holds carry it, and its advisory lock says it is alive. */
  private id = randomUUID();
  private readonly logger = new Logger('Registry');
  private lease: Lease | undefined;

  constructor(
    private readonly instances: RuntimeInstanceRepository,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  get controllerId(): string {
    return this.id;
  }

  get hostId(): string {
    return this.settings.controllerHostId;
  }

  async onModuleInit(): Promise<void> {
    // The lock lives as long as its session: it tells other controllers of this host that we are alive.
    // Taken or not is checked: a lock held elsewhere (a hash collision) means a fresh id, never no lease.
    for (let attempt = 0; this.lease === undefined; attempt++) {
      if (attempt === 5) throw new Error('could not take a controller lease: every id tried was locked');
      if (attempt > 0) this.id = randomUUID();
      this.lease = (await this.instances.acquireLease(this.controllerId)) ?? undefined;
    }
    const swept = await this.instances.sweepOrphans(this.hostId, this.controllerId).catch((error: unknown) => {
      // The controller never migrates: say what to do instead of printing PostgreSQL's "relation does not exist".
      if ((error as { driverError?: { code?: string } }).driverError?.code === PG_UNDEFINED_TABLE) {
        throw new Error(
          'the registry table is missing: apply the migrations first (npm run migration:run, or start the api)',
        );
      }
      throw error;
    });
    if (swept > 0) {
      this.logger.log({ hostId: this.hostId, instances: swept }, 'marked instances of a previous run disconnected');
    }
  }

  /** `service/register`, after `TokenBindingGuard` allowed it (DESIGN 6.3): one upsert. */
  async register(connection: RegistryConnection, params: RegisterParams): Promise<RegisterResult> {
    const runtimeInstanceId = await this.instances.register({
      runtimeInstanceId: newId(),
      hostId: this.hostId,
      serviceId: params.serviceId,
      envTag: params.envTag ?? null,
      version: params.version ?? null,
      protocol: params.protocol ?? null,
      address: params.address ?? null,
      port: params.port ?? null,
      tags: params.tags ?? {},
      controllerId: this.controllerId,
      connectionId: connection.id,
    });
    connection.instances.add(runtimeInstanceId);
    // The socket may have closed while the upsert ran: its close handler did not see this id.
    if (connection.closed) await this.markDisconnected(connection.id, [runtimeInstanceId]);
    this.logger.log(
      { runtimeInstanceId, serviceId: params.serviceId, envTag: params.envTag ?? null, connectionId: connection.id },
      'instance registered',
    );
    return { runtimeInstanceId, status: 'registered' };
  }

  /** `service/deregister`: only the connection that registered the instance (and still holds it). */
  async deregister(connection: RegistryConnection, runtimeInstanceId: string): Promise<DeregisterResult> {
    if (!connection.instances.has(runtimeInstanceId)) throw forbidden(NOT_OWNER_MESSAGE);
    const held = await this.instances.deregister(runtimeInstanceId, connection.id);
    connection.instances.delete(runtimeInstanceId);
    // Another connection re-registered it meanwhile: it is theirs now.
    if (!held) throw forbidden(NOT_OWNER_MESSAGE);
    this.logger.log({ runtimeInstanceId, connectionId: connection.id }, 'instance deregistered');
    return { runtimeInstanceId, status: 'deregistered' };
  }

  /** `discovery/lookup`: connected instances of this controller's host (whose token `TokenBindingGuard` checked). */
  async lookup(params: LookupParams): Promise<LookupResult> {
    // One more than the cap tells whether the answer was cut.
    const nodes = await this.instances.connected(this.hostId, params.serviceId, params, LOOKUP_MAX_NODES + 1);
    const truncated = nodes.length > LOOKUP_MAX_NODES;
    return {
      serviceId: params.serviceId,
      envTag: params.envTag ?? null,
      nodes: nodes.slice(0, LOOKUP_MAX_NODES).map(toNodeView),
      ...(truncated ? { truncated } : {}),
    };
  }

  /** `GET /instances` for operators: every host's instances, filtered, in identity order. */
  async list(query: ListInstancesQuery): Promise<InstancePage> {
    const [instances, total] = await this.instances.page(query, query.offset, query.limit);
    return { total, instances: instances.map(toInstanceView) };
  }

  /** A connection closed or went silent: its instances are disconnected at once (DESIGN 8). */
  async markDisconnected(connectionId: string, runtimeInstanceIds: readonly string[]): Promise<number> {
    if (runtimeInstanceIds.length === 0) return 0;
    const affected = await this.instances.disconnect(runtimeInstanceIds, connectionId);
    if (affected > 0) this.logger.log({ connectionId, instances: affected }, 'instances disconnected');
    return affected;
  }

  /** Records that these instances' connections answered the last liveness ping. */
  async touch(runtimeInstanceIds: readonly string[]): Promise<void> {
    if (runtimeInstanceIds.length === 0) return;
    await this.instances.touch(runtimeInstanceIds, this.controllerId);
  }

  /** Shutdown: whatever this process still holds is disconnected; then the lease is given up. */
  async releaseAll(): Promise<void> {
    try {
      await this.instances.releaseAll(this.controllerId);
    } finally {
      const lease = this.lease;
      this.lease = undefined;
      await lease?.release();
    }
  }
}
