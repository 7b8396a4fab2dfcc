import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { Injectable } from '@nestjs/common';

/**
 * scrypt cost for a server-generated 256-bit secret (DESIGN 10): the entropy, not the work factor, is
 * what makes guessing hopeless, so a small N (1 MiB, about 2 ms here) keeps issuance cheap while the salt
 * and the one-way function still make a leaked table useless.
 */
export const SCRYPT = { N: 1024, r: 8, p: 1 } as const;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
/** Secret checks computing at once per process; beyond, the token endpoint answers 503. */
export const MAX_CHECKS_IN_FLIGHT = 32;
/** Hashes computed per authentication, whatever the client: its current one and one still in rotation grace. */
export const HASHES_PER_CHECK = 2;
/**
 * Computed in place of the hashes a client lacks (an unknown id, no secret in grace), so the count of scrypt
 * runs, and so the time, never tells them apart; a match on it is ignored, so it can never let anyone in.
 */
export const PADDING_HASH = [
  'scrypt',
  SCRYPT.N,
  SCRYPT.r,
  SCRYPT.p,
  Buffer.alloc(SALT_BYTES).toString('base64url'),
  Buffer.alloc(KEY_BYTES).toString('base64url'),
].join('$');

function derive(secret: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, KEY_BYTES, { ...options, maxmem: 64 * 1024 * 1024 }, (error, key) =>
      error === null ? resolve(key) : reject(error),
    );
  });
}

/** A new client secret: 256 random bits, base64url (43 characters). */
export function generateSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** `scrypt$N$r$p$salt$key`, salt and key base64url. */
export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(secret, salt, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** True when `secret` matches the stored hash; compared in constant time. */
export async function secretMatches(secret: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || salt === undefined || key === undefined) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await derive(secret, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Thrown when MAX_CHECKS_IN_FLIGHT checks are already computing. */
export class TooManyChecksError extends Error {}

/** Secret checks with a cap on how many compute at once, so a flood cannot take every core. */
@Injectable()
export class SecretChecker {
  private inFlight = 0;

  /** True when `secret` matches one of the client's `hashes` (none for an unknown client). */
  async matchesAny(secret: string, hashes: readonly string[]): Promise<boolean> {
    if (this.inFlight >= MAX_CHECKS_IN_FLIGHT) throw new TooManyChecksError();
    this.inFlight += 1;
    try {
      const padding = Array<string>(Math.max(0, HASHES_PER_CHECK - hashes.length)).fill(PADDING_HASH);
      let matched = false;
      // Every candidate is computed, so the time tells neither which one matched nor how many were real.
      for (const [i, hash] of [...hashes, ...padding].entries()) {
        if ((await this.check(secret, hash)) && i < hashes.length) matched = true;
      }
      return matched;
    } finally {
      this.inFlight -= 1;
    }
  }

  /** One scrypt computation and constant-time comparison; a method so tests can count them. */
  check(secret: string, hash: string): Promise<boolean> {
    return secretMatches(secret, hash);
  }
}
