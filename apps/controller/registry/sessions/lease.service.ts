import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { ControllerLeaseRepository, type Reaped } from '#database';
import { SETTINGS, type Settings } from '#platform';

const PG_UNDEFINED_TABLE = '42P01';

/**
 * This controller replica's lease (DESIGN 8.1), judged by the database's clock: renewed every eighth of
 * REGISTRY_LEASE_MS and valid for two thirds of it, so a renewal may come 13/24 of a lease late (8.1 s of
 * the default 15 s: a mass disconnect once delayed one by 2.4 s) and a dead replica is still reaped within
 * 19/24. A replica reaps others only after holding its own lease without a gap
 * for a whole REGISTRY_LEASE_MS: after a database outage every survivor renews before anyone reaps. A
 * renewal on a new session (a restart or a failover to a new primary, whose clock then judges) starts a new
 * hold, so no survivor reaps one that is still reconnecting (DESIGN 15).
 */
@Injectable()
export class LeaseService implements OnModuleInit, OnApplicationBootstrap {
  /** This process; instance rows it holds carry it. */
  readonly controllerId = randomUUID();
  private readonly logger = new Logger('Lease');
  private readonly lostHandlers = new Set<() => void>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private released = false;
  private renewedAt = performance.now();

  constructor(
    private readonly leases: ControllerLeaseRepository,
    @Inject(SETTINGS) private readonly settings: Settings,
    private readonly http: HttpAdapterHost,
  ) {}

  async onModuleInit(): Promise<void> {
    try {
      await this.leases.take(this.controllerId, this.settings.controllerHostId, this.ttlMs);
    } catch (error) {
      // The controller never migrates: say what to do instead of printing PostgreSQL's "relation does not exist".
      if ((error as { code?: string }).code === PG_UNDEFINED_TABLE) {
        throw new Error(
          'the registry tables are missing: apply the migrations first (npm run migration:run, or start the api)',
        );
      }
      throw error;
    }
    this.renewedAt = performance.now();
    const swept = await this.leases.sweepUnleased();
    if (swept > 0) this.logger.log({ instances: swept }, 'marked instances without a live holder disconnected');
    this.timer = setInterval(() => void this.tick(), this.settings.registryLeaseMs / 8);
    this.timer.unref();
  }

  /** Once listening, a restart on the same host:port reaps the previous process at once. */
  onApplicationBootstrap(): void {
    const server = this.http.httpAdapter?.getHttpServer() as Server | undefined;
    server?.once('listening', () => {
      const { port } = server.address() as AddressInfo;
      this.leases.claimEndpoint(this.controllerId, `${hostname()}:${port}`).then(
        (reaped) => this.report(reaped, 'reaped the previous process on this endpoint'),
        (error: unknown) => this.logger.warn({ err: error }, 'could not record the endpoint'),
      );
    });
  }

  /** Called when this replica's lease was found reaped (it froze or lost the database for too long). */
  onLost(handler: () => void): void {
    this.lostHandlers.add(handler);
  }

  /** Clean shutdown: the lease and every instance still held go in one statement (watchers are told at once). */
  async release(): Promise<number> {
    this.released = true;
    clearInterval(this.timer);
    // A renewal still in flight would otherwise find the lease gone and take a new one nobody releases.
    await this.ticking;
    return this.leases.release(this.controllerId);
  }

  private get ttlMs(): number {
    return Math.round((this.settings.registryLeaseMs * 2) / 3);
  }

  /** Renew first; reap others only with an unbroken hold of a whole lease. */
  private tick(): Promise<void> {
    if (this.ticking !== undefined || this.released) return Promise.resolve();
    this.ticking = this.renewOrReap().finally(() => {
      this.ticking = undefined;
    });
    return this.ticking;
  }

  private async renewOrReap(): Promise<void> {
    try {
      const heldMs = await this.leases.renew(this.controllerId, this.ttlMs);
      if (heldMs === null) {
        this.logger.warn({ controllerId: this.controllerId }, 'lease was reaped by another replica; taking a new one');
        await this.leases.take(this.controllerId, this.settings.controllerHostId, this.ttlMs);
        this.renewedAt = performance.now();
        for (const handler of this.lostHandlers) handler();
        return;
      }
      this.warnIfLate();
      if (heldMs >= this.settings.registryLeaseMs)
        this.report(await this.leases.reapExpired(this.controllerId), 'reaped');
    } catch (error) {
      // The database is away: nothing is renewed, so nothing is reaped; the next tick tries again.
      this.logger.warn({ err: error }, 'lease renewal failed');
    }
  }

  /** A renewal after half its lease had run (normally an eighth of REGISTRY_LEASE_MS): what delays it may soon get it reaped. */
  private warnIfLate(): void {
    const gapMs = Math.round(performance.now() - this.renewedAt);
    this.renewedAt = performance.now();
    if (gapMs > this.ttlMs / 2) this.logger.warn({ gapMs, validMs: this.ttlMs }, 'lease renewed late');
  }

  private report(reaped: Reaped, message: string): void {
    if (reaped.controllers > 0) this.logger.warn({ ...reaped }, `${message}: instances of dead replicas disconnected`);
  }
}
