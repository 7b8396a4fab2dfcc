import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { FAILURE_WINDOW_MS, FailureLimiter, MAX_PAIR_FAILURES, type Attempt } from './failure-limiter.js';

/** The admitted attempt; a refusal (seconds to wait) fails the test. */
function admitted(limiter: FailureLimiter, clientId: string, address: string): Attempt {
  const attempt = limiter.admit(clientId, address);
  if (typeof attempt === 'number') throw new Error(`refused for ${attempt} s`);
  return attempt;
}

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
    expect(typeof limiter.admit('next', '10.1.0.2')).toBe('object');
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
    expect(limiter.admit('locked', '10.2.0.1')).toBe(1);
    jest.advanceTimersByTime(1000);
    expect(typeof limiter.admit('locked', '10.2.0.1')).toBe('object');
  });

  it('counts text that cannot be a client id under one key per address, never under its own text', () => {
    const limiter = new FailureLimiter();
    const sprayed = (i: number) => `${'x'.repeat(16 * 1024)}-${i}`;
    for (let i = 0; i < MAX_PAIR_FAILURES; i++) admitted(limiter, sprayed(i), '10.3.0.1').failed();
    expect(limiter.tracked()).toEqual({ pairs: 1, addresses: 1 });
    // Shared, so the eleventh is locked as a repeated made-up id is; a valid-looking id is not.
    expect(limiter.admit(sprayed(99), '10.3.0.1')).toBeGreaterThan(0);
    expect(limiter.admit('has space', '10.3.0.1')).toBeGreaterThan(0);
    expect(typeof limiter.admit('made-up', '10.3.0.1')).toBe('object');
    // Another address has its own placeholder.
    expect(typeof limiter.admit(sprayed(99), '10.3.0.2')).toBe('object');
  });
});
