import { Injectable } from '@nestjs/common';
import { isClientId } from './client-id.js';

/** DESIGN 10: ten failed authentications of one (client id, address) pair within a minute lock that pair. */
export const MAX_PAIR_FAILURES = 10;
/** DESIGN 10: thirty failed authentications from one address within a minute lock that address. */
export const MAX_ADDRESS_FAILURES = 30;
export const FAILURE_WINDOW_MS = 60_000;
/** Pairs and addresses remembered at most (each); the least recently failed is forgotten first. */
const MAX_TRACKED = 10_000;
/** The pair key part of every text that cannot be a client id; itself not one, so no client shares it. */
const NOT_A_CLIENT_ID = '(not a client id)';

/** One admitted authentication: counted as in flight until its outcome is known. */
export interface Attempt {
  /** The secret did not match (or the client does not exist): a failure for the pair and the address. */
  failed(): void;
  /** The secret matched: nothing is forgotten (DESIGN 10 counts failures within a minute, successes between them or not). */
  succeeded(): void;
  /** No verdict (the check could not run): the attempt counts for nothing. */
  abandoned(): void;
}

/**
 * A refused attempt: seconds to wait, and whether only attempts still in flight fill the allowance (`busy`:
 * answered 503 like any cap on checks in flight, DESIGN 10) rather than failures (429).
 */
export interface Refusal {
  readonly retryAfter: number;
  readonly busy: boolean;
  /**
   * Set when only the pair's own attempts in flight fill its allowance: ask again once one settles (a
   * failure may lock the pair by then; a success leaves room), rather than answering now.
   */
  readonly settled?: Promise<void>;
}

/** Failure timestamps per key, oldest key first, bounded and dropped once out of the window, so memory stays flat. */
class FailureLog {
  private readonly failures = new Map<string, number[]>();
  private readonly pending = new Map<string, number>();

  constructor(
    private readonly limit: number,
    private readonly now: () => number,
  ) {}

  /** Keys remembered: those with a failure in the window as of the last access. */
  get size(): number {
    return this.failures.size;
  }

  /** Why and how long an attempt must wait, or undefined when it is admitted now. */
  lockedFor(key: string): Refusal | undefined {
    this.prune();
    const recent = this.recent(key);
    if (recent.length >= this.limit) {
      // Failures wait until enough of them leave the window.
      const expiring = recent[recent.length - this.limit] ?? this.now();
      return { retryAfter: Math.max(1, Math.ceil((expiring + FAILURE_WINDOW_MS - this.now()) / 1000)), busy: false };
    }
    // Attempts in flight count as if they might fail; they settle within a check's time.
    const pending = this.pending.get(key) ?? 0;
    return recent.length + pending < this.limit ? undefined : { retryAfter: 1, busy: true };
  }

  begin(key: string): void {
    this.pending.set(key, (this.pending.get(key) ?? 0) + 1);
  }

  end(key: string): void {
    const left = (this.pending.get(key) ?? 1) - 1;
    if (left > 0) this.pending.set(key, left);
    else this.pending.delete(key);
  }

  fail(key: string): void {
    this.prune();
    const recent = this.recent(key);
    recent.push(this.now());
    this.failures.delete(key);
    this.failures.set(key, recent);
    if (this.failures.size > MAX_TRACKED) {
      const oldest = this.failures.keys().next().value;
      if (oldest !== undefined) this.failures.delete(oldest);
    }
  }

  /** Forgets keys whose last failure left the window: oldest first (the map's order), so each costs once. */
  private prune(): void {
    const since = this.now() - FAILURE_WINDOW_MS;
    for (const [key, times] of this.failures) {
      if ((times.at(-1) ?? 0) > since) return;
      this.failures.delete(key);
    }
  }

  private recent(key: string): number[] {
    const since = this.now() - FAILURE_WINDOW_MS;
    return (this.failures.get(key) ?? []).filter((t) => t > since);
  }
}

/**
 * Failed client authentications per (client id, address) and per address, in this process (DESIGN 10).
 * Existing and made-up ids are counted alike, so no answer tells them apart; keyed by address, so
 * failures from other addresses never lock a client out. Attempts in flight count toward both limits until
 * they settle, so a concurrent flood gets no more secret checks than a limit allows: beyond the address's it
 * is 503 (busy), beyond the pair's it waits for one to settle; only failures make the 429.
 */
@Injectable()
export class FailureLimiter {
  private readonly pairs: FailureLog;
  private readonly addresses: FailureLog;
  /** Attempts waiting for one of their pair's attempts in flight to settle. */
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(now: () => number = Date.now) {
    this.pairs = new FailureLog(MAX_PAIR_FAILURES, now);
    this.addresses = new FailureLog(MAX_ADDRESS_FAILURES, now);
  }

  /** Pairs and addresses remembered, for tests and diagnostics. */
  tracked(): { readonly pairs: number; readonly addresses: number } {
    return { pairs: this.pairs.size, addresses: this.addresses.size };
  }

  /** The refusal when the pair or the address is locked (failures first); else the admitted attempt, to be settled once. */
  admit(clientId: string, address: string): Refusal | Attempt {
    // Text that cannot be a client id (a 16 KB spray) is counted under one fixed key, never kept as it came.
    const pair = `${address}\u0000${isClientId(clientId) ? clientId : NOT_A_CLIENT_ID}`;
    const pairLock = this.pairs.lockedFor(pair);
    const addressLock = this.addresses.lockedFor(address);
    const pairFailed = pairLock?.busy === false;
    if (pairFailed || addressLock !== undefined) {
      // A failure lock of either wins (429); an address full of attempts in flight is busy (503).
      const retryAfter = Math.max(pairFailed ? pairLock.retryAfter : 0, addressLock?.retryAfter ?? 0);
      return { retryAfter, busy: !pairFailed && addressLock?.busy === true };
    }
    // A pair full of attempts in flight waits instead: a client's own concurrent requests (a fleet renewing at
    // once, bench token's 16 connections) are not refused, and a burst of guesses gets no more than ten checks.
    if (pairLock !== undefined) return this.wait(pair);
    this.pairs.begin(pair);
    this.addresses.begin(address);
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      this.pairs.end(pair);
      this.addresses.end(address);
      outcome();
      this.wake(pair);
    };
    return {
      failed: () =>
        settle(() => {
          this.pairs.fail(pair);
          this.addresses.fail(address);
        }),
      succeeded: () => settle(() => undefined),
      abandoned: () => settle(() => undefined),
    };
  }

  /** Busy, to ask again once an attempt of `pair` settles; at most as many waiting as an address may have in flight. */
  private wait(pair: string): Refusal {
    const queue = this.waiting.get(pair) ?? [];
    if (queue.length >= MAX_ADDRESS_FAILURES) return { retryAfter: 1, busy: true };
    this.waiting.set(pair, queue);
    return { retryAfter: 1, busy: true, settled: new Promise<void>((resolve) => queue.push(resolve)) };
  }

  /** Every attempt waiting on `pair` asks again: one finds the room just freed, or all find the pair locked. */
  private wake(pair: string): void {
    const queue = this.waiting.get(pair);
    if (queue === undefined) return;
    this.waiting.delete(pair);
    for (const resolve of queue) resolve();
  }
}
