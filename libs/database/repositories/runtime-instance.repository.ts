import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { RuntimeInstance } from '../entities/runtime-instance.entity.js';
import { uniqueViolation } from '../pg-errors.js';
import { Keyset, namedParameters, type KeysetPage, type PageWindow } from '../keyset.js';
import { BaseRepository } from '../repository.js';

/** The identity of re-registration (host, service, env, address, port). */
const IDENTITY_CONSTRAINT = 'uq_runtime_instance_identity';

/** The operators' list order: an instance's identity (uq_runtime_instance_identity's columns), then its id. */
const INSTANCE_KEYSET = new Keyset([
  { sql: 'ri.host_id', type: 'text' },
  { sql: 'ri.service_id', type: 'text' },
  { sql: 'ri.env_tag', type: 'text', nullable: true },
  { sql: 'ri.address', type: 'text', nullable: true },
  { sql: 'ri.port', type: 'integer', nullable: true },
  { sql: 'ri.runtime_instance_id', type: 'text' },
]);

/**
 * Registration: re-registering the same host+service+env+address+port reuses the row (and so the id),
 * atomically. Exported so the bench's bare baseline runs exactly this statement.
 */
export const REGISTER_INSTANCE = `
  insert into runtime_instance as ri (runtime_instance_id, host_id, service_id, env_tag, version, protocol, address,
    port, tags, status, connected_ts, last_seen_ts, disconnected_ts, controller_id, connection_id)
  values ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, 'connected', now(), now(), null, $10, $11)
  on conflict on constraint uq_runtime_instance_identity do update set
    version = excluded.version, protocol = excluded.protocol, tags = excluded.tags, status = 'connected',
    connected_ts = excluded.connected_ts, last_seen_ts = excluded.last_seen_ts, disconnected_ts = null,
    controller_id = excluded.controller_id, connection_id = excluded.connection_id
  returning ri.runtime_instance_id`;

// Only rows still held by their connection (a newer registration stays connected), locked in id order like
// TOUCH's, so two multi-row updates of one controller's rows never wait on each other in a cycle.
const DISCONNECT = `
  with gone as (
    select ri.runtime_instance_id from runtime_instance ri
    join unnest($1::varchar[], $2::uuid[]) as closed(runtime_instance_id, connection_id)
      on ri.runtime_instance_id = closed.runtime_instance_id and ri.connection_id = closed.connection_id
    where ri.status = 'connected'
    order by ri.runtime_instance_id
    for no key update of ri
  )
  update runtime_instance ri set status = 'disconnected', disconnected_ts = now()
  from gone where ri.runtime_instance_id = gone.runtime_instance_id
  returning ri.runtime_instance_id`;

// The unique identity's columns; only when a socket at its registration cap registers again (DESIGN 8).
const IDENTITY_HELD = `
  select 1 from runtime_instance
   where host_id = $1 and service_id = $2 and env_tag is not distinct from $3
     and address is not distinct from $4 and port is not distinct from $5 and connection_id = $6
     and status = 'connected'`;

const DEREGISTER = `
  update runtime_instance set status = 'deregistered', disconnected_ts = now()
  where runtime_instance_id = $1 and connection_id = $2 and status = 'connected'
  returning runtime_instance_id`;

// Omitted (null) fields keep their value; only rows the connection still holds (a compare-and-set, as above).
const UPDATE_METADATA = `
  update runtime_instance set version = coalesce($3, version), protocol = coalesce($4, protocol),
    port = coalesce($5::integer, port), tags = coalesce($6::jsonb, tags)
  where runtime_instance_id = any($1) and connection_id = $2 and status = 'connected'
  returning runtime_instance_id`;

// The rows, no longer connected, that already have the identity a new port gives these (an earlier run's).
const FREE_IDENTITY = `
  delete from runtime_instance s using runtime_instance t
  where t.runtime_instance_id = any($1) and t.connection_id = $2 and t.status = 'connected'
    and s.host_id = t.host_id and s.service_id = t.service_id and s.env_tag is not distinct from t.env_tag
    and s.address is not distinct from t.address and s.port = $3 and s.status <> 'connected'
    and s.runtime_instance_id <> all($1)`;

// Locked in id order (as DISCONNECT): a heartbeat and a batch of disconnects of the same rows never deadlock.
const TOUCH = `
  with seen as (
    select runtime_instance_id from runtime_instance
    where runtime_instance_id = any($1) and controller_id = $2 and status = 'connected'
    order by runtime_instance_id
    for no key update
  )
  update runtime_instance ri set last_seen_ts = now()
  from seen where ri.runtime_instance_id = seen.runtime_instance_id`;

/** A closed connection and the instances it held. */
export interface ClosedConnection {
  readonly connectionId: string;
  readonly runtimeInstanceIds: readonly string[];
}

export interface InstanceRegistration {
  readonly runtimeInstanceId: string;
  readonly hostId: string;
  readonly serviceId: string;
  readonly envTag: string | null;
  readonly version: string | null;
  readonly protocol: string | null;
  readonly address: string | null;
  readonly port: number | null;
  readonly tags: Readonly<Record<string, string>>;
  readonly controllerId: string;
  readonly connectionId: string;
}

/** What `service/update_metadata` may change (DESIGN 8); an omitted field keeps its value. */
export interface InstanceMetadata {
  readonly version?: string | undefined;
  readonly protocol?: string | undefined;
  readonly port?: number | undefined;
  readonly tags?: Readonly<Record<string, string>> | undefined;
}

export interface InstanceFilter {
  readonly hostId?: string;
  readonly serviceId?: string;
  readonly envTag?: string;
  readonly status?: string;
  readonly protocol?: string;
}

/**
 * The runtime instances aggregate (DESIGN 8). Registry writes are raw SQL on a short-lived runner: the
 * registration storm bench showed TypeORM's builder and hydration costing more than the statement.
 */
@Injectable()
export class RuntimeInstanceRepository extends BaseRepository {
  constructor(@InjectDataSource() db: DataSource) {
    super(db);
  }

  /** Upserts the instance by its identity; answers the (possibly reused) id. */
  async register(instance: InstanceRegistration): Promise<string> {
    const { rows } = await this.execute<{ runtime_instance_id: string }>(REGISTER_INSTANCE, [
      instance.runtimeInstanceId,
      instance.hostId,
      instance.serviceId,
      instance.envTag,
      instance.version,
      instance.protocol,
      instance.address,
      instance.port,
      JSON.stringify(instance.tags),
      instance.controllerId,
      instance.connectionId,
    ]);
    const row = rows[0];
    if (row === undefined) throw new Error('upsert of runtime_instance returned no row');
    return row.runtime_instance_id;
  }

  /**
   * Marks these instances disconnected where their connection still holds them; answers the ids it marked.
   * One statement for many closes: a mass disconnect is a few writes, not one per socket.
   */
  async disconnect(closed: readonly ClosedConnection[]): Promise<Set<string>> {
    const ids = closed.flatMap((c) => c.runtimeInstanceIds);
    const connections = closed.flatMap((c) => c.runtimeInstanceIds.map(() => c.connectionId));
    const { rows } = await this.execute<{ runtime_instance_id: string }>(DISCONNECT, [ids, connections]);
    return new Set(rows.map((row) => row.runtime_instance_id));
  }

  /** Whether `connectionId` holds the connected instance of this identity (a re-registration adds none). */
  async holdsIdentity(
    identity: Pick<InstanceRegistration, 'hostId' | 'serviceId' | 'envTag' | 'address' | 'port' | 'connectionId'>,
  ): Promise<boolean> {
    const { hostId, serviceId, envTag, address, port, connectionId } = identity;
    return (
      (await this.execute(IDENTITY_HELD, [hostId, serviceId, envTag, address, port, connectionId])).rows.length > 0
    );
  }

  /** Deregisters the instance if `connectionId` still holds it; false when it does not. */
  async deregister(runtimeInstanceId: string, connectionId: string): Promise<boolean> {
    return (await this.execute(DEREGISTER, [runtimeInstanceId, connectionId])).rows.length > 0;
  }

  /**
   * Changes the metadata of these instances where `connectionId` still holds them; answers the ids changed,
   * or undefined (nothing changed) when a new port would give one of them the identity of another connected
   * instance. Rows of that identity that are no longer connected give it up (deleted in the same transaction).
   */
  async updateMetadata(
    runtimeInstanceIds: readonly string[],
    connectionId: string,
    metadata: InstanceMetadata,
  ): Promise<string[] | undefined> {
    const parameters = [
      runtimeInstanceIds,
      connectionId,
      metadata.version ?? null,
      metadata.protocol ?? null,
      metadata.port ?? null,
      metadata.tags === undefined ? null : JSON.stringify(metadata.tags),
    ];
    const runner = this.db.createQueryRunner();
    try {
      // Without a new port the identity stays as it is: one statement, no transaction.
      if (metadata.port !== undefined) {
        await runner.startTransaction();
        await runner.query(FREE_IDENTITY, [runtimeInstanceIds, connectionId, metadata.port]);
      }
      const result = await runner.query(UPDATE_METADATA, parameters, true);
      if (runner.isTransactionActive) await runner.commitTransaction();
      return (result.records as { runtime_instance_id: string }[]).map((row) => row.runtime_instance_id);
    } catch (error) {
      if (runner.isTransactionActive) await runner.rollbackTransaction().catch(() => undefined);
      if (uniqueViolation(error) === IDENTITY_CONSTRAINT) return undefined;
      throw error;
    } finally {
      await runner.release();
    }
  }

  async touch(runtimeInstanceIds: readonly string[], controllerId: string): Promise<void> {
    await this.execute(TOUCH, [runtimeInstanceIds, controllerId]);
  }

  /** Connected instances of one service on one host, oldest connection first. */
  connected(
    hostId: string,
    serviceId: string,
    filter: Pick<InstanceFilter, 'envTag' | 'protocol'>,
    limit: number,
  ): Promise<RuntimeInstance[]> {
    const query = this.manager
      .getRepository(RuntimeInstance)
      .createQueryBuilder('ri')
      .where('ri.host_id = :hostId', { hostId })
      .andWhere('ri.service_id = :serviceId', { serviceId })
      .andWhere(`ri.status = 'connected'`);
    if (filter.envTag !== undefined) query.andWhere('ri.env_tag = :envTag', { envTag: filter.envTag });
    if (filter.protocol !== undefined) query.andWhere('ri.protocol = :protocol', { protocol: filter.protocol });
    return query.orderBy('ri.connected_ts', 'ASC').addOrderBy('ri.runtime_instance_id').limit(limit).getMany();
  }

  /** The order of `page`, whose cursors carry an instance's identity and id. */
  readonly keyset = INSTANCE_KEYSET;

  /**
   * A page of instances in identity order (the identity constraint's index; unique, so the id only breaks
   * ties in form), from `window`'s offset or after its instance, with the total when it asks.
   */
  async page(filter: InstanceFilter, window: PageWindow): Promise<KeysetPage<RuntimeInstance>> {
    const select = this.manager.getRepository(RuntimeInstance).createQueryBuilder('ri');
    if (filter.hostId !== undefined) select.andWhere('ri.host_id = :hostId', { hostId: filter.hostId });
    if (filter.serviceId !== undefined) select.andWhere('ri.service_id = :serviceId', { serviceId: filter.serviceId });
    if (filter.envTag !== undefined) select.andWhere('ri.env_tag = :envTag', { envTag: filter.envTag });
    if (filter.status !== undefined) select.andWhere('ri.status = :status', { status: filter.status });
    const count = window.withTotal ? select.clone().getCount() : undefined;
    if (window.after !== undefined) {
      const parameters: Record<string, unknown> = {};
      select.andWhere(INSTANCE_KEYSET.after(window.after, namedParameters(parameters)), parameters);
    }
    for (const { sql, alias } of INSTANCE_KEYSET.selectItems()) select.addSelect(sql, alias);
    for (const { sql, direction } of INSTANCE_KEYSET.orderItems()) select.addOrderBy(sql, direction);
    const [read, total] = await Promise.all([
      select
        .offset(window.offset)
        .limit(window.limit + 1)
        .getRawAndEntities(),
      count,
    ]);
    const { rows, next } = INSTANCE_KEYSET.pageOf(read.entities, window.limit, (_, i) => read.raw[i] as object);
    return { rows, next, ...(total === undefined ? {} : { total }) };
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
