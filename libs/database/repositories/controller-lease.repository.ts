import { Inject, Injectable } from '@nestjs/common';
import { ControlSession } from '../control-session.js';

/** Channel of every change a watcher of a service can see (trigger in migration CreateControllerLease). */
export const REGISTRY_CHANNEL = 'bindery_registry';

const TAKE = `
  insert into controller_lease (controller_id, host_id, held_since_ts, renewed_ts, expires_ts)
  values ($1, $2, now(), now(), now() + $3 * interval '1 millisecond')`;

// A renewal after the lease had lapsed (a database outage, a frozen process) starts a new unbroken run; so
// does the first on a new session ($3): it may be a failed-over primary, whose clock now judges every lease.
const RENEW = `
  update controller_lease set
    held_since_ts = case when expires_ts < now() or $3::boolean then now() else held_since_ts end,
    renewed_ts = now(),
    expires_ts = now() + $2 * interval '1 millisecond'
  where controller_id = $1
  returning (extract(epoch from now() - held_since_ts) * 1000)::bigint as held_ms`;

/**
 * Deletes the leases `dead` selects (a condition on controller_lease, never this process's own) and, in
 * the same statement, disconnects the instances they held; answers both counts. `before` adds CTEs that
 * run first.
 */
const reap = (dead: string, before = ''): string => `
  with ${before} dead as (
    delete from controller_lease where ${dead} and controller_id <> $1 returning controller_id
  ), gone as (
    update runtime_instance set status = 'disconnected', disconnected_ts = now()
    where status = 'connected' and controller_id in (select controller_id from dead)
    returning 1
  )
  select (select count(*) from dead)::int as controllers, (select count(*) from gone)::int as instances`;

// Expired leases of other replicas.
const REAP_EXPIRED = reap('expires_ts < now()');

// Two live processes cannot listen on one host:port, so an older lease there belongs to a dead predecessor.
const CLAIM_ENDPOINT = reap(
  'endpoint = $2',
  'mine as (update controller_lease set endpoint = $2 where controller_id = $1),',
);

// Instances whose holder has no lease at all (written before leases existed, or by a replica reaped meanwhile).
const SWEEP_UNLEASED = `
  update runtime_instance ri set status = 'disconnected', disconnected_ts = now()
  where ri.status = 'connected'
    and not exists (select 1 from controller_lease l where l.controller_id = ri.controller_id)`;

const RELEASE = `
  with lease as (
    delete from controller_lease where controller_id = $1
  ), gone as (
    update runtime_instance set status = 'disconnected', disconnected_ts = now()
    where controller_id = $1 and status = 'connected'
    returning 1
  )
  select (select count(*) from gone)::int as instances`;

export interface Reaped {
  readonly controllers: number;
  readonly instances: number;
}

/**
 * Controller replicas' leases (DESIGN 8.1), judged by the database's clock. Its statements run on the
 * process's `ControlSession`, so a busy pool never delays a renewal into looking like a dead replica.
 */
@Injectable()
export class ControllerLeaseRepository {
  /** The session was lost and came back since the last renewal (a restart or a failover, DESIGN 15). */
  private newSession = false;

  constructor(@Inject(ControlSession) private readonly session: ControlSession) {
    // Others may not have renewed on the new primary yet: no reaping before a whole lease held there.
    session.onReconnect(() => {
      this.newSession = true;
    });
  }

  async take(controllerId: string, hostId: string, ttlMs: number): Promise<void> {
    await this.session.query(TAKE, [controllerId, hostId, ttlMs]);
  }

  /** Extends the lease; answers for how long (ms) it has been held without a gap, or null when it was reaped. */
  async renew(controllerId: string, ttlMs: number): Promise<number | null> {
    // Reconnected first, so a renewal that brings the session back knows it is a new one.
    await this.session.ensureConnected();
    const restart = this.newSession;
    this.newSession = false;
    try {
      const { rows } = await this.session.query<{ held_ms: string }>(RENEW, [controllerId, ttlMs, restart]);
      return rows[0] === undefined ? null : Number(rows[0].held_ms);
    } catch (error) {
      this.newSession ||= restart;
      throw error;
    }
  }

  /** Removes expired leases of other replicas and disconnects their instances. */
  async reapExpired(controllerId: string): Promise<Reaped> {
    return this.counts(REAP_EXPIRED, [controllerId]);
  }

  /** Records where this replica listens and reaps an earlier lease on the same endpoint. */
  async claimEndpoint(controllerId: string, endpoint: string): Promise<Reaped> {
    return this.counts(CLAIM_ENDPOINT, [controllerId, endpoint]);
  }

  /** Disconnects instances whose holder holds no lease; answers how many. */
  async sweepUnleased(): Promise<number> {
    return (await this.session.query(SWEEP_UNLEASED)).rowCount;
  }

  /** A clean shutdown: the lease and everything it still held, in one statement. */
  async release(controllerId: string): Promise<number> {
    const { rows } = await this.session.query<{ instances: number }>(RELEASE, [controllerId]);
    return rows[0]?.instances ?? 0;
  }

  private async counts(sql: string, parameters: unknown[]): Promise<Reaped> {
    const { rows } = await this.session.query<Reaped>(sql, parameters);
    return rows[0] ?? { controllers: 0, instances: 0 };
  }
}
