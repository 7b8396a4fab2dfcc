import { Injectable } from '@nestjs/common';

/** DESIGN 10: ten failed authentications of one client id from one address within a minute lock that pair. */
export const MAX_FAILURES = 10;
export const FAILURE_WINDOW_MS = 60_000;
/**
 * Where failures of client ids that do not exist are counted: one entry per address for all of them, so
 * made-up ids cannot each start a fresh count (DESIGN 10). No real client id holds a control character.
 */
export const UNKNOWN_CLIENT = '\u0000unknown';
/** Pairs remembered at most; the oldest is forgotten first, so memory stays bounded under a spray. */
const MAX_TRACKED = 10_000;

/**
 * Failed client authentications per (client id, source address), in this process. Keyed by both, so
 * failures from other addresses never lock a client out; checked before any hash is computed. Unknown
 * client ids all count under `UNKNOWN_CLIENT` for their address.
 */
@Injectable()
export class FailureLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Seconds to wait when the pair is locked, else undefined. */
  lockedFor(clientId: string, address: string): number | undefined {
    const recent = this.recent(this.key(clientId, address));
    if (recent.length < MAX_FAILURES) return undefined;
    const oldest = recent[recent.length - MAX_FAILURES] ?? this.now();
    return Math.max(1, Math.ceil((oldest + FAILURE_WINDOW_MS - this.now()) / 1000));
  }

  recordFailure(clientId: string, address: string): void {
    const key = this.key(clientId, address);
    const recent = this.recent(key);
    recent.push(this.now());
    this.failures.delete(key);
    this.failures.set(key, recent);
    if (this.failures.size > MAX_TRACKED) {
      const oldest = this.failures.keys().next().value;
      if (oldest !== undefined) this.failures.delete(oldest);
    }
  }

  /** A success forgets the pair's failures. */
  recordSuccess(clientId: string, address: string): void {
    this.failures.delete(this.key(clientId, address));
  }

  private key(clientId: string, address: string): string {
    return `${address}\u0000${clientId}`;
  }

  private recent(key: string): number[] {
    const since = this.now() - FAILURE_WINDOW_MS;
    return (this.failures.get(key) ?? []).filter((t) => t > since);
  }
}
