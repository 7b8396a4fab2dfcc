import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import {
  FAILURE_WINDOW_MS,
  FailureLimiter,
  MAX_ADDRESS_FAILURES,
  MAX_PAIR_FAILURES,
  type Attempt,
  type Refusal,
} from './failure-limiter.js';

/** The admitted attempt; a refusal fails the test. */
function admitted(limiter: FailureLimiter, clientId: string, address: string): Attempt {
  const attempt = limiter.admit(clientId, address);
  if ('retryAfter' in attempt) throw new Error(`refused for ${attempt.retryAfter} s`);
  return attempt;
}

/** The refusal; an admitted attempt fails the test. */
function refused(limiter: FailureLimiter, clientId: string, address: string): Refusal {
  const attempt = limiter.admit(clientId, address);
  if (!('retryAfter' in attempt)) throw new Error('admitted');
  return attempt;
}

const isAdmitted = (result: Attempt | Refusal): boolean => !('retryAfter' in result);

describe('FailureLimiter memory (DESIGN 10 lockout, kept per process)', () => {
  // Fake clock: the window is judged exactly, without waiting a minute.
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('forgets pairs and addresses whose failures have all left the window', () => {
    const limiter = new FailureLimiter();
    for (let i = 0; i < 50; i++) admitted(limiter, `client-${i}`, `10.0.${i}.1`).failed();
    expect(limiter.tracked()).toEqual({ pairs: 50, addresses: 50 });
    jest.advanceTimersByTime(FAILURE_WINDOW_MS / 2);
    admitted(limiter, 'late', '10.1.0.1').failed();
    expect(limiter.tracked()).toEqual({ pairs: 51, addresses: 51 });
    jest.advanceTimersByTime(FAILURE_WINDOW_MS / 2 + 1);
    // The next request drops the first fifty, out of the window now; the late one is not.
    expect(isAdmitted(limiter.admit('next', '10.1.0.2'))).toBe(true);
    expect(limiter.tracked()).toEqual({ pairs: 1, addresses: 1 });
    jest.advanceTimersByTime(FAILURE_WINDOW_MS / 2);
    admitted(limiter, 'last', '10.1.0.3').failed();
    expect(limiter.tracked()).toEqual({ pairs: 1, addresses: 1 });
  });

  it('keeps a lock for its whole window while it prunes others', () => {
    const limiter = new FailureLimiter();
    for (let i = 0; i < MAX_PAIR_FAILURES; i++) admitted(limiter, 'locked', '10.2.0.1').failed();
    jest.advanceTimersByTime(FAILURE_WINDOW_MS - 1000);
    admitted(limiter, 'other', '10.2.0.2').failed();
    expect(refused(limiter, 'locked', '10.2.0.1')).toEqual({ retryAfter: 1, busy: false });
    jest.advanceTimersByTime(1000);
    expect(isAdmitted(limiter.admit('locked', '10.2.0.1'))).toBe(true);
  });

  it('counts text that cannot be a client id under one key per address, never under its own text', () => {
    const limiter = new FailureLimiter();
    const sprayed = (i: number) => `${'x'.repeat(16 * 1024)}-${i}`;
    for (let i = 0; i < MAX_PAIR_FAILURES; i++) admitted(limiter, sprayed(i), '10.3.0.1').failed();
    expect(limiter.tracked()).toEqual({ pairs: 1, addresses: 1 });
    // Shared, so the eleventh is locked as a repeated made-up id is; a valid-looking id is not.
    expect(refused(limiter, sprayed(99), '10.3.0.1').retryAfter).toBeGreaterThan(0);
    expect(refused(limiter, 'has space', '10.3.0.1').retryAfter).toBeGreaterThan(0);
    expect(isAdmitted(limiter.admit('made-up', '10.3.0.1'))).toBe(true);
    // Another address has its own placeholder.
    expect(isAdmitted(limiter.admit(sprayed(99), '10.3.0.2'))).toBe(true);
  });

  it("counts a pair's failures within the minute whatever succeeded between them (DESIGN 10)", () => {
    const limiter = new FailureLimiter();
    for (let i = 0; i < MAX_PAIR_FAILURES / 2; i++) admitted(limiter, 'flaky', '10.4.0.1').failed();
    admitted(limiter, 'flaky', '10.4.0.1').succeeded();
    for (let i = 0; i < MAX_PAIR_FAILURES / 2; i++) admitted(limiter, 'flaky', '10.4.0.1').failed();
    expect(refused(limiter, 'flaky', '10.4.0.1').busy).toBe(false);
  });

  it("refuses attempts beyond the address's allowance as busy while they are only in flight, not as failures", () => {
    const limiter = new FailureLimiter();
    const inFlight = Array.from({ length: MAX_ADDRESS_FAILURES }, (_, i) => admitted(limiter, `c-${i}`, '10.5.0.1'));
    expect(refused(limiter, 'one-more', '10.5.0.1')).toEqual({ retryAfter: 1, busy: true });
    inFlight[0]?.succeeded();
    admitted(limiter, 'one-more', '10.5.0.1').succeeded();
    // Failures, not attempts in flight, make the lock: all thirty failing lock the address.
    for (const attempt of inFlight.slice(1)) attempt.failed();
    admitted(limiter, 'last', '10.5.0.1').failed();
    expect(refused(limiter, 'real', '10.5.0.1').busy).toBe(false);
  });

  it("makes a pair's attempts beyond ten in flight wait for one to settle, so a burst cannot pass ten failures", async () => {
    const limiter = new FailureLimiter();
    const inFlight = Array.from({ length: MAX_PAIR_FAILURES }, () => admitted(limiter, 'fleet', '10.6.0.1'));
    const waiting = refused(limiter, 'fleet', '10.6.0.1');
    expect(waiting).toMatchObject({ retryAfter: 1, busy: true });
    expect(waiting.settled).toBeInstanceOf(Promise);
    // Another client from the same address is not held up by this pair.
    admitted(limiter, 'other', '10.6.0.1').succeeded();
    // A success leaves room: the waiting attempt is admitted when it asks again.
    inFlight[0]?.succeeded();
    await waiting.settled;
    const next = admitted(limiter, 'fleet', '10.6.0.1');
    // Ten failures lock the pair: whoever waits is then answered 429, with no check run.
    const again = refused(limiter, 'fleet', '10.6.0.1');
    for (const attempt of [...inFlight.slice(1), next]) attempt.failed();
    await again.settled;
    expect(refused(limiter, 'fleet', '10.6.0.1')).toMatchObject({ busy: false });
    expect(refused(limiter, 'fleet', '10.6.0.1').settled).toBeUndefined();
  });
});
