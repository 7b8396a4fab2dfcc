import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { ControlSession } from '../control-session.js';
import { FeedWaker } from './change-event.repository.js';

type Notify = Pick<ControlSession, 'query'>;
const NO_ROWS = { rows: [], rowCount: 0 };

/** A control session whose NOTIFY takes `ms`, recording when each was sent. */
function session(ms: number): Notify & { sent: number[] } {
  const sent: number[] = [];
  const query = <T>(): Promise<{ rows: T[]; rowCount: number }> => {
    sent.push(Date.now());
    return new Promise((done) => setTimeout(() => done(NO_ROWS), ms));
  };
  return { sent, query };
}

// Fake timers and clock: the intervals are judged exactly, whatever the machine's load.
const sleep = async (ms: number): Promise<void> => {
  await jest.advanceTimersByTimeAsync(ms);
};

describe('FeedWaker (the change feed wake-up after commits)', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('sends the first wake-up at once, then at most one per interval while commits keep coming', async () => {
    const notify = session(1);
    const waker = new FeedWaker(notify, 20);
    const start = Date.now();
    waker.wake();
    expect(notify.sent).toHaveLength(1);
    while (Date.now() - start < 200) {
      waker.wake();
      await sleep(1);
    }
    await sleep(60);
    const elapsed = Date.now() - start;
    // One per 20 ms over the burst, and one more for the commits of the last interval.
    expect(notify.sent.length).toBeGreaterThanOrEqual(10);
    expect(notify.sent.length).toBeLessThanOrEqual(Math.ceil(elapsed / 20) + 1);
    for (let i = 1; i < notify.sent.length; i++) {
      expect((notify.sent[i] ?? 0) - (notify.sent[i - 1] ?? 0)).toBeGreaterThanOrEqual(19);
    }
  });

  it('never loses the wake-up of a commit that came while one was in flight or waiting', async () => {
    const notify = session(5);
    const waker = new FeedWaker(notify, 20);
    waker.wake();
    await sleep(2);
    // In flight: this commit's readers must still be woken, by a later NOTIFY.
    waker.wake();
    await sleep(60);
    expect(notify.sent).toHaveLength(2);
    // Idle again: the next commit is told at once.
    const before = Date.now();
    waker.wake();
    expect(notify.sent).toHaveLength(3);
    expect((notify.sent[2] ?? 0) - before).toBeLessThan(5);
  });

  it('keeps waking after a NOTIFY fails (readers poll again at their timeout meanwhile)', async () => {
    let calls = 0;
    const failingOnce: Notify = {
      query: <T>(): Promise<{ rows: T[]; rowCount: number }> => {
        calls += 1;
        return calls === 1 ? Promise.reject(new Error('connection lost')) : Promise.resolve(NO_ROWS);
      },
    };
    const waker = new FeedWaker(failingOnce, 5);
    waker.wake();
    await sleep(10);
    waker.wake();
    await sleep(10);
    expect(calls).toBe(2);
  });
});
