import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type QueryRunner } from 'typeorm';
import { newId, SETTINGS, type Settings } from '#platform';
import type { RegistryConnection } from './connection.js';
import { UPSERT } from './registry.sql.js';
import type { ListInstancesQuery } from './dto/list-instances.query.js';
import type { LookupParams } from './dto/lookup.params.js';
import type { RegisterParams } from './dto/register.params.js';
import { forbidden, NOT_OWNER_MESSAGE } from './registry.errors.js';
import { RuntimeInstance } from './runtime-instance.entity.js';
import {
  toInstanceView,
  toNodeView,
  type DeregisterResult,
  type InstancePage,
  type LookupResult,
  type RegisterResult,
} from './runtime-instance.view.js';

const PG_UNDEFINED_TABLE = '42P01';

// Advisory-lock namespace of live controller processes; the second key is hashtext(controller id).
const LEASE_KEY = 7_243_002;

// Only rows still held by that connection: a newer registration of the same instance stays connected.
const DISCONNECT = `
  update runtime_instance set status = 'disconnected', disconnected_ts = now()
  where runtime_instance_id = any($1) and connection_id = $2 and status = 'connected'`;

const DEREGISTER = `
  update runtime_instance set status = 'deregistered', disconnected_ts = now()
  where runtime_instance_id = $1 and connection_id = $2 and status = 'connected'
  returning runtime_instance_id`;

const TOUCH = `
  update runtime_instance set last_seen_ts = now()
  where runtime_instance_id = any($1) and controller_id = $2 and status = 'connected'`;

const RELEASE_ALL = `
  update runtime_instance set status = 'disconnected', disconnected_ts = now()
  where controller_id = $1 and status = 'connected'`;

// Instances of this host left "connected" by a controller process that no longer holds its lease lock
// (a previous run that crashed or was killed); live replicas keep theirs.
const SWEEP_ORPHANS = `
  update runtime_instance ri set status = 'disconnected', disconnected_ts = now()
  where ri.host_id = $1 and ri.status = 'connected' and ri.controller_id <> $2
    and not exists (
      select 1 from pg_locks l
      where l.locktype = 'advisory' and l.granted and l.objsubid = 2
        and l.database = (select oid from pg_database where datname = current_database())
        and l.classid = $3 and l.objid = hashtext(ri.controller_id::text)::oid)`;

interface IdRow {
  readonly runtime_instance_id: string;
}

/**
 * The registry of runtime instances (DESIGN 8). The gateway's guards decided the token and the binding
 * before any method here runs; the database's identity constraint is the only duplicate check.
 */
@Injectable()
export class RegistryService implements OnModuleInit {
  /** This controller process; rows it holds carry it, and its advisory lock says it is alive. */
  readonly controllerId = randomUUID();
  private readonly logger = new Logger('Registry');
  private lease: QueryRunner | undefined;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  get hostId(): string {
    return this.settings.controllerHostId;
  }

  async onModuleInit(): Promise<void> {
    await this.takeLease();
    const swept = await this.execute(SWEEP_ORPHANS, [this.hostId, this.controllerId, LEASE_KEY]).catch(
      (error: unknown) => {
        // The controller never migrates: say what to do instead of printing PostgreSQL's "relation does not exist".
        if ((error as { driverError?: { code?: string } }).driverError?.code === PG_UNDEFINED_TABLE) {
          throw new Error(
            'the registry table is missing: apply the migrations first (npm run migration:run, or start the api)',
          );
        }
        throw error;
      },
    );
    if (swept.affected > 0) {
      this.logger.log(
        { hostId: this.hostId, instances: swept.affected },
        'marked instances of a previous run disconnected',
      );
    }
  }

  /** `service/register`, after `TokenBindingGuard` allowed it (DESIGN 6.3): one upsert. */
  async register(connection: RegistryConnection, params: RegisterParams): Promise<RegisterResult> {
    const { rows } = await this.execute<IdRow>(UPSERT, [
      newId(),
      this.hostId,
      params.serviceId,
      params.envTag ?? null,
      params.version ?? null,
      params.protocol ?? null,
      params.address ?? null,
      params.port ?? null,
      JSON.stringify(params.tags ?? {}),
      this.controllerId,
      connection.id,
    ]);
    const runtimeInstanceId = rows[0].runtime_instance_id;
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
    const { rows } = await this.execute<IdRow>(DEREGISTER, [runtimeInstanceId, connection.id]);
    connection.instances.delete(runtimeInstanceId);
    // Another connection re-registered it meanwhile: it is theirs now.
    if (rows.length === 0) throw forbidden(NOT_OWNER_MESSAGE);
    this.logger.log({ runtimeInstanceId, connectionId: connection.id }, 'instance deregistered');
    return { runtimeInstanceId, status: 'deregistered' };
  }

  /** `discovery/lookup`: connected instances of this controller's host (whose token `TokenBindingGuard` checked). */
  async lookup(params: LookupParams): Promise<LookupResult> {
    const query = this.db
      .getRepository(RuntimeInstance)
      .createQueryBuilder('ri')
      .where('ri.host_id = :hostId', { hostId: this.hostId })
      .andWhere('ri.service_id = :serviceId', { serviceId: params.serviceId })
      .andWhere(`ri.status = 'connected'`);
    if (params.envTag !== undefined) query.andWhere('ri.env_tag = :envTag', { envTag: params.envTag });
    if (params.protocol !== undefined) query.andWhere('ri.protocol = :protocol', { protocol: params.protocol });
    const instances = await query.orderBy('ri.connected_ts', 'ASC').addOrderBy('ri.runtime_instance_id').getMany();
    return { serviceId: params.serviceId, envTag: params.envTag ?? null, nodes: instances.map(toNodeView) };
  }

  /** `GET /instances` for operators: every host's instances, filtered, in identity order. */
  async list(query: ListInstancesQuery): Promise<InstancePage> {
    const select = this.db.getRepository(RuntimeInstance).createQueryBuilder('ri');
    if (query.hostId !== undefined) select.andWhere('ri.host_id = :hostId', { hostId: query.hostId });
    if (query.serviceId !== undefined) select.andWhere('ri.service_id = :serviceId', { serviceId: query.serviceId });
    if (query.envTag !== undefined) select.andWhere('ri.env_tag = :envTag', { envTag: query.envTag });
    if (query.status !== undefined) select.andWhere('ri.status = :status', { status: query.status });
    const [instances, total] = await select
      .orderBy('ri.host_id')
      .addOrderBy('ri.service_id')
      .addOrderBy('ri.env_tag')
      .addOrderBy('ri.address')
      .addOrderBy('ri.port')
      .addOrderBy('ri.runtime_instance_id')
      .offset(query.offset)
      .limit(query.limit)
      .getManyAndCount();
    return { total, instances: instances.map(toInstanceView) };
  }

  /** A connection closed or went silent: its instances are disconnected at once (DESIGN 8). */
  async markDisconnected(connectionId: string, runtimeInstanceIds: readonly string[]): Promise<number> {
    if (runtimeInstanceIds.length === 0) return 0;
    const { affected } = await this.execute(DISCONNECT, [runtimeInstanceIds, connectionId]);
    if (affected > 0) this.logger.log({ connectionId, instances: affected }, 'instances disconnected');
    return affected;
  }

  /** Records that these instances' connections answered the last liveness ping. */
  async touch(runtimeInstanceIds: readonly string[]): Promise<void> {
    if (runtimeInstanceIds.length === 0) return;
    await this.execute(TOUCH, [runtimeInstanceIds, this.controllerId]);
  }

  /** Shutdown: whatever this process still holds is disconnected; then the lease is given up. */
  async releaseAll(): Promise<void> {
    try {
      await this.execute(RELEASE_ALL, [this.controllerId]);
    } finally {
      await this.dropLease();
    }
  }

  private async takeLease(): Promise<void> {
    const runner = this.db.createQueryRunner();
    await runner.connect();
    // The lock lives as long as this session: it tells other controllers of this host that we are alive.
    // A try-lock: a hash collision with a live controller must not block start-up (it only shields our rows).
    await runner.query('select pg_try_advisory_lock($1, hashtext($2))', [LEASE_KEY, this.controllerId]);
    this.lease = runner;
  }

  private async dropLease(): Promise<void> {
    const runner = this.lease;
    this.lease = undefined;
    if (runner === undefined) return;
    try {
      // Unlocked explicitly: a released runner's session goes back to the pool with its locks.
      await runner.query('select pg_advisory_unlock($1, hashtext($2))', [LEASE_KEY, this.controllerId]);
    } finally {
      await runner.release();
    }
  }

  private async execute<T = never>(sql: string, parameters: unknown[]): Promise<{ rows: T[]; affected: number }> {
    const runner = this.db.createQueryRunner();
    try {
      const result = await runner.query(sql, parameters, true);
      return { rows: result.records as T[], affected: result.affected ?? 0 };
    } finally {
      await runner.release();
    }
  }
}
