import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { RuntimeInstanceRepository } from '#database';
import { isDatabaseUnavailable } from '#platform';
import { hasControlChars, newId, SETTINGS, type Settings } from '#platform';
import { registeredEnv, type Principal } from '#token-binding';
import { listInstances, toNodeView, type InstancePage, type ListInstancesQuery } from '#registry';
import { Connections, type RegistryConnection } from './sessions/connection.js';
import type { LookupParams } from './dto/lookup.params.js';
import { MAX_ENV_TAG, type RegisterParams } from './dto/register.params.js';
import { LeaseService } from './sessions/lease.service.js';
import { DisconnectBatch } from './sessions/disconnect-batch.js';
import { forbidden, NOT_OWNER_MESSAGE, paramRefused } from './registry.errors.js';
import type { UpdateMetadataParams } from './dto/update-metadata.params.js';
import type { DeregisterResult, LookupResult, RegisterResult, UpdateMetadataResult } from './runtime-instance.view.js';

/**
 * The registry of runtime instances (DESIGN 8). The gateway's guards decided the token and the binding
 * before any method here runs; the database's identity constraint is the only duplicate check.
 */
/** Nodes one `discovery/lookup` answer lists at most (the longest-connected first). */
export const LOOKUP_MAX_NODES = 1000;

/** Registrations one socket may hold (DESIGN 8); a fleet behind one socket is not what the protocol is for. */
export const MAX_REGISTRATIONS_PER_SOCKET = 100;

/** How long a disconnect that failed (database away) waits before it is tried again. */
const DISCONNECT_RETRY_MS = 1000;

@Injectable()
export class RegistryService {
  private readonly logger = new Logger('Registry');
  private stopping = false;
  private readonly disconnects: DisconnectBatch;

  constructor(
    private readonly instances: RuntimeInstanceRepository,
    private readonly lease: LeaseService,
    @Inject(SETTINGS) private readonly settings: Settings,
    // Tests that drive the service alone get a registry of sockets of their own.
    @Optional() private readonly connections: Connections = new Connections(),
  ) {
    this.disconnects = new DisconnectBatch(instances);
  }

  /** This controller process; rows it holds carry it. */
  get controllerId(): string {
    return this.lease.controllerId;
  }

  get hostId(): string {
    return this.settings.controllerHostId;
  }

  /**
   * `service/register`, after `TokenBindingGuard` allowed it (DESIGN 6.3): one upsert, under the token's
   * `env` when the params name none.
   */
  async register(connection: RegistryConnection, params: RegisterParams, caller: Principal): Promise<RegisterResult> {
    const envTag = registeredEnv(caller.claims, params.envTag) ?? null;
    // The token's env stands in for the param, so it must be a valid envTag too.
    if (envTag !== null && (envTag.length > MAX_ENV_TAG || hasControlChars(envTag))) {
      throw paramRefused(
        'envTag',
        `the token's env is not a valid envTag (1..${MAX_ENV_TAG} characters, no control characters)`,
      );
    }
    const identity = {
      hostId: this.hostId,
      serviceId: params.serviceId,
      envTag,
      address: params.address ?? null,
      port: params.port ?? null,
      connectionId: connection.id,
    };
    // Registering again an identity the socket holds adds no registration, so the cap does not refuse it.
    const full = connection.instances.size >= MAX_REGISTRATIONS_PER_SOCKET;
    if (full && !(await this.instances.holdsIdentity(identity))) {
      throw paramRefused('serviceId', `at most ${MAX_REGISTRATIONS_PER_SOCKET} registrations per connection`);
    }
    const runtimeInstanceId = await this.instances.register({
      ...identity,
      runtimeInstanceId: newId(),
      version: params.version ?? null,
      protocol: params.protocol ?? null,
      tags: params.tags ?? {},
      controllerId: this.controllerId,
    });
    this.connections.hold(connection, runtimeInstanceId, {
      serviceId: params.serviceId,
      envTag,
      productId: params.productId ?? null,
      productVersion: params.productVersion ?? null,
    });
    // The socket may have closed while the upsert ran: its close handler did not see this id.
    if (connection.closed) await this.markDisconnected(connection.id, [runtimeInstanceId]);
    this.logger.log(
      {
        runtimeInstanceId,
        serviceId: params.serviceId,
        envTag,
        productId: params.productId,
        connectionId: connection.id,
      },
      'instance registered',
    );
    return { runtimeInstanceId, status: 'registered' };
  }

  /**
   * `service/update_metadata` (DESIGN 8): the fields given change on every registration the socket holds, or
   * on the one it names, in one statement; the registry trigger's NOTIFY tells every replica and the api.
   */
  async updateMetadata(connection: RegistryConnection, params: UpdateMetadataParams): Promise<UpdateMetadataResult> {
    const named = params.runtimeInstanceId;
    if (named !== undefined && !connection.instances.has(named)) throw forbidden(NOT_OWNER_MESSAGE);
    const ids = named === undefined ? [...connection.instances] : [named];
    if (ids.length === 0) throw paramRefused('runtimeInstanceId', 'this connection holds no registration');
    // Null counts as omitted, as in `service/register`: a field is changed only by a value.
    const metadata = {
      version: params.version ?? undefined,
      protocol: params.protocol ?? undefined,
      port: params.port ?? undefined,
      tags: params.tags ?? undefined,
    };
    const updated = await this.instances.updateMetadata(ids, connection.id, metadata);
    if (updated === undefined) {
      throw paramRefused('port', 'another connected registration of this service already has this address and port');
    }
    // One order for the answer and the log, whatever order the statement returned.
    updated.sort();
    const { version, protocol, port, tags } = metadata;
    const changed = Object.entries(metadata).flatMap(([field, value]) => (value === undefined ? [] : [field]));
    // Tag values are the runtime's own data: the line names how many, not what.
    const line = {
      runtimeInstanceIds: updated,
      changed,
      version,
      protocol,
      port,
      tags: tags && Object.keys(tags).length,
    };
    this.logger.log({ ...line, connectionId: connection.id }, 'instance metadata updated');
    return { runtimeInstanceIds: updated, status: 'updated' };
  }

  /** `service/deregister`: only the connection that registered the instance (and still holds it). */
  async deregister(
    connection: RegistryConnection,
    runtimeInstanceId: string,
    reason?: string,
  ): Promise<DeregisterResult> {
    if (!connection.instances.has(runtimeInstanceId)) throw forbidden(NOT_OWNER_MESSAGE);
    const held = await this.instances.deregister(runtimeInstanceId, connection.id);
    this.connections.release(connection, runtimeInstanceId);
    // Another connection re-registered it meanwhile: it is theirs now.
    if (!held) throw forbidden(NOT_OWNER_MESSAGE);
    this.logger.log({ runtimeInstanceId, reason, connectionId: connection.id }, 'instance deregistered');
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

  /** `GET /instances` for operators: the instances `principal` may see (DESIGN 16), filtered, in identity order. */
  list(principal: Principal, query: ListInstancesQuery): Promise<InstancePage> {
    return listInstances(this.instances, principal, query);
  }

  /**
   * A connection closed or went silent: its instances are disconnected at once (DESIGN 8). With the
   * database away the write is retried until it lands, so no row stays "connected" for a closed socket.
   */
  async markDisconnected(connectionId: string, runtimeInstanceIds: readonly string[]): Promise<number> {
    if (runtimeInstanceIds.length === 0) return 0;
    try {
      const affected = await this.disconnects.mark(connectionId, runtimeInstanceIds);
      if (affected > 0) this.logger.log({ connectionId, instances: affected }, 'instances disconnected');
      return affected;
    } catch (error) {
      if (!isDatabaseUnavailable(error) || this.stopping) throw error;
      await new Promise((resolve) => setTimeout(resolve, DISCONNECT_RETRY_MS));
      return this.markDisconnected(connectionId, runtimeInstanceIds);
    }
  }

  /** Records that these instances' connections answered the last liveness ping. */
  async touch(runtimeInstanceIds: readonly string[]): Promise<void> {
    if (runtimeInstanceIds.length === 0) return;
    await this.instances.touch(runtimeInstanceIds, this.controllerId);
  }

  /** Shutdown: whatever this process still holds is disconnected and the lease given up, in one statement. */
  async releaseAll(): Promise<void> {
    this.stopping = true;
    const released = await this.lease.release();
    if (released > 0) this.logger.log({ instances: released }, 'instances disconnected at shutdown');
  }
}
