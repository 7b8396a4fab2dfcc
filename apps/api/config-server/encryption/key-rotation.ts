import { Injectable } from '@nestjs/common';
import { ConfigKeyRepository, UnitOfWork } from '#database';
import { ConfigKeys } from './config-keys.js';
import { unwrapDataKey, wrapDataKey } from './envelope.js';
import { KeyRingError } from './errors.js';

/** Data keys re-wrapped per transaction: short transactions, and a stopped run keeps what it did. */
const REWRAP_BATCH = 500;

/** A key encryption key and the data keys it wraps. */
export interface KidUse {
  readonly kid: string;
  readonly dataKeys: number;
  readonly active: boolean;
  readonly inRing: boolean;
}

/**
 * Key rotation (DESIGN 17): which kids wrap how many data keys, re-wrapping every data key under the
 * active kid (no value is read or changed: no version, no ETag change, no push), and the start-up check
 * that the ring holds every kid the database needs.
 */
@Injectable()
export class KeyRotation {
  constructor(
    private readonly keys: ConfigKeys,
    private readonly dataKeys: ConfigKeyRepository,
    private readonly work: UnitOfWork,
  ) {}

  /** Every kid of the ring or of a stored data key, active first, with its count of data keys. */
  async uses(): Promise<KidUse[]> {
    const counts = await this.dataKeys.countByKid();
    const ring = this.keys.ring?.kids ?? [];
    const kids = [...ring, ...[...counts.keys()].filter((kid) => !ring.includes(kid)).sort()];
    return kids.map((kid, i) => ({
      kid,
      dataKeys: counts.get(kid) ?? 0,
      active: ring.length > 0 && i === 0,
      inRing: ring.includes(kid),
    }));
  }

  /**
   * Re-wraps every data key not under the active kid, in batches (resumable: a stopped run leaves only
   * whole batches done); answers how many it re-wrapped.
   */
  async rewrap(): Promise<{ kid: string; rewrapped: number }> {
    const ring = this.keys.ring;
    if (ring === null) throw new KeyRingError('no key ring (CONFIG_KEYRING_FILE): nothing to re-wrap under');
    const { kid } = ring.active;
    let rewrapped = 0;
    for (;;) {
      const done = await this.work.run(async (tx) => {
        const batch = await this.dataKeys.in(tx).notWrappedUnder(kid, REWRAP_BATCH);
        const again = batch.map((stored) => ({
          dataKeyId: stored.dataKeyId,
          ...wrapDataKey(ring, unwrapDataKey(ring, stored)),
        }));
        await this.dataKeys.in(tx).rewrap(again);
        return again.length;
      });
      rewrapped += done;
      if (done < REWRAP_BATCH) return { kid, rewrapped };
    }
  }

  /** Refuses (KeyRingError naming the kid and the count) when stored data keys name a kid the ring lacks. */
  async assertRingComplete(): Promise<void> {
    const missing = (await this.uses()).filter((use) => !use.inRing && use.dataKeys > 0);
    const [first] = missing;
    if (first === undefined) return;
    const where = this.keys.ring === null ? 'no key ring is configured (CONFIG_KEYRING_FILE)' : 'the key ring lacks it';
    throw new KeyRingError(
      `${first.dataKeys} stored data keys are wrapped under kid "${first.kid}" and ${where}` +
        `${missing.length > 1 ? ` (and ${missing.length - 1} more kids)` : ''}: add it back to CONFIG_KEYRING_FILE,` +
        ' run keys:rewrap, and only then remove it (docs/config-server.md)',
    );
  }
}
