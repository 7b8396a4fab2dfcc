import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { ControllerLeaseRepository, ControlSession, migrate } from '#database';
import { waitFor } from '../support/wait.js';

const LEASE_MS = 15_000;
const sessionUrl = (): string => process.env.DATABASE_SESSION_URL || process.env.DATABASE_URL || '';

/**
 * DESIGN 15: after a failover every replica's session comes back on a new primary, in its own time. The
 * first to come back must not reap one that has not renewed there yet (its lease, written under the old
 * primary's clock, may look expired): a renewal on a new session starts a new unbroken hold.
 */
describe('a lease renewed on a new session (a failover) reaps no one for a whole lease', () => {
  const admin = new pg.Client({ connectionString: sessionUrl() });
  const applicationName = `bindery-lease-test-${randomUUID().slice(0, 8)}`;
  const session = new ControlSession(sessionUrl(), applicationName);
  const leases = new ControllerLeaseRepository(session);
  const a = randomUUID();
  const b = randomUUID();

  beforeAll(async () => {
    await migrate(sessionUrl());
    await admin.connect();
    await session.listen('bindery_lease_test', () => undefined);
    await leases.take(a, `h-${a}`, LEASE_MS / 2);
    await leases.take(b, `h-${b}`, LEASE_MS / 2);
    // A has held its lease for an hour; B's renewal is late (its session is still coming back).
    await admin.query(
      `update controller_lease set held_since_ts = now() - interval '1 hour' where controller_id = $1`,
      [a],
    );
    await admin.query(
      `update controller_lease set held_since_ts = now() - interval '1 hour', renewed_ts = now() - interval '8 seconds',
       expires_ts = now() - interval '1 second' where controller_id = $1`,
      [b],
    );
  });

  afterAll(async () => {
    await admin.query('delete from controller_lease where controller_id = any($1)', [[a, b]]);
    await admin.end();
    await session.close();
  });

  it('on the same session the hold is unbroken; after the session was lost it restarts at zero', async () => {
    expect(await leases.renew(a, LEASE_MS / 2)).toBeGreaterThanOrEqual(LEASE_MS);
    await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [
      applicationName,
    ]);
    await waitFor(() => !session.connected, 'the session to notice it was lost');
    const held = await leases.renew(a, LEASE_MS / 2);
    expect(held).not.toBeNull();
    expect(held).toBeLessThan(LEASE_MS);
    // So LeaseService does not reap: B is still there for its own renewal.
    const { rows } = await admin.query('select 1 from controller_lease where controller_id = $1', [b]);
    expect(rows).toHaveLength(1);
    expect(await leases.renew(b, LEASE_MS / 2)).not.toBeNull();
  });
});
