import { Injectable, Logger } from '@nestjs/common';
import { ConfigKeyRepository, type JsonValue, type SealedValue, type Stored, type Tx } from '#database';
import { ProblemException } from '#platform';
import { ConfigKeys } from './config-keys.js';
import {
  newDataKey,
  openJson,
  openValue,
  sealJson,
  sealValue,
  unwrapDataKey,
  valueAad,
  wrapDataKey,
} from './envelope.js';
import { DecryptError } from './errors.js';

/** Unwrapped data keys kept in memory: a read of a layer opens its version's key once, not once per value. */
const OPENED_KEYS = 10_000;

/** A data key just made: its id in `config_data_key` and its bytes. */
export interface FreshKey {
  readonly dataKeyId: string;
  readonly key: Buffer;
}

/** A data key not stored yet, and its wrapping under the active kid. */
export interface UnstoredKey {
  readonly key: Buffer;
  readonly wrapped: { readonly kid: string; readonly wrapped: Buffer };
}

/** The answer to a value that cannot be decrypted (DESIGN 17): never the ciphertext, never an omission. */
export const undecryptable = (): ProblemException => new ProblemException(500, 'Config value cannot be decrypted');

/**
 * Seals and opens config values with the key ring (DESIGN 17): makes one data key per version or file
 * content (stored wrapped), opens stored values after the merge. A value that fails to open is logged with
 * its layer and name (never a value) and answered 500.
 */
@Injectable()
export class ConfigVault {
  private readonly logger = new Logger('ConfigVault');
  private readonly opened = new Map<string, Buffer>();
  private switchedOn = false;

  constructor(
    private readonly keys: ConfigKeys,
    private readonly dataKeys: ConfigKeyRepository,
  ) {}

  /** Whether writes in `tx` are sealed: the database's switch is on and this process has a key ring. */
  async sealing(tx: Tx): Promise<boolean> {
    if (this.keys.ring === null) return false;
    // The switch is never turned off again: once seen on, no write needs to read it.
    if (this.switchedOn) return true;
    this.switchedOn = await this.dataKeys.in(tx).encryptedWrites();
    return this.switchedOn;
  }

  /** `count` fresh data keys, stored wrapped under the active kid in `tx`. */
  async newKeys(tx: Tx, count: number): Promise<FreshKey[]> {
    const keys = this.unstoredKeys(count);
    const ids = await this.dataKeys.in(tx).insert(keys.map((k) => k.wrapped));
    return keys.map(({ key }, i) => this.adopt(ids[i] ?? '', key));
  }

  /**
   * `count` fresh data keys with their wrapping under the active kid, for the caller to store with what
   * they seal (one statement); `adopt` each once stored. A sealed value's AAD names no key id.
   */
  unstoredKeys(count: number): UnstoredKey[] {
    const ring = this.keys.ring;
    if (ring === null) throw new Error('no key ring: config values cannot be sealed');
    return Array.from({ length: count }, () => {
      const key = newDataKey();
      return { key, wrapped: wrapDataKey(ring, key) };
    });
  }

  /** A data key stored as `dataKeyId`: kept open for the reads that follow. */
  adopt(dataKeyId: string, key: Buffer): FreshKey {
    this.remember(dataKeyId, key);
    return { dataKeyId, key };
  }

  sealProperty(key: Pick<FreshKey, 'key'>, value: SealedTarget, json: JsonValue): Buffer {
    return sealJson(key.key, json, valueAad(value.address, value.name));
  }

  sealContent(key: Pick<FreshKey, 'key'>, value: SealedTarget, bytes: Buffer): Buffer {
    return sealValue(key.key, bytes, valueAad(value.address, value.name));
  }

  /** Opens stored property values (plaintext ones pass through), in the order given. */
  async openJson(values: readonly (readonly [string, Stored<JsonValue>])[]): Promise<[string, JsonValue][]> {
    await this.load(values.map(([, v]) => v));
    return values.map(([name, v]) => [name, 'plain' in v ? v.plain : this.openOne(v, openJson)]);
  }

  /** Opens stored file contents (plaintext ones pass through), in the order given. */
  async openBytes(values: readonly (readonly [string, Stored<Buffer>])[]): Promise<[string, Buffer][]> {
    await this.load(values.map(([, v]) => v));
    return values.map(([name, v]) => [name, 'plain' in v ? v.plain : this.openOne(v, openValue)]);
  }

  private openOne<T>(value: SealedValue, open: (key: Buffer, sealed: Buffer, aad: string) => T): T {
    const key = this.opened.get(value.dataKeyId);
    try {
      if (key === undefined) throw new DecryptError(`data key ${value.dataKeyId} is missing`);
      return open(key, value.sealed, valueAad(value.address, value.name));
    } catch (error) {
      if (!(error instanceof DecryptError)) throw error;
      this.logger.error(
        { layer: value.address, key: value.name, dataKeyId: value.dataKeyId, reason: error.message },
        'config value cannot be decrypted',
      );
      throw undecryptable();
    }
  }

  /** Unwraps the data keys `values` need that are not open yet (one statement for all of them). */
  private async load(values: readonly Stored<unknown>[]): Promise<void> {
    const missing = new Set<string>();
    for (const v of values) if (!('plain' in v) && !this.opened.has(v.dataKeyId)) missing.add(v.dataKeyId);
    if (missing.size === 0) return;
    const ring = this.keys.ring;
    for (const stored of await this.dataKeys.byIds([...missing])) {
      if (ring === null) continue;
      try {
        this.remember(stored.dataKeyId, unwrapDataKey(ring, stored));
      } catch (error) {
        // Left closed: each value under it is reported with its layer and name when opened.
        if (!(error instanceof DecryptError)) throw error;
        this.logger.error({ dataKeyId: stored.dataKeyId, kid: stored.kid, reason: error.message }, 'data key');
      }
    }
  }

  private remember(dataKeyId: string, key: Buffer): void {
    if (this.opened.size >= OPENED_KEYS) {
      const oldest = this.opened.keys().next();
      if (oldest.done !== true) this.opened.delete(oldest.value);
    }
    this.opened.set(dataKeyId, key);
  }
}

/** What a sealed value's AAD names: its layer and its name. */
export type SealedTarget = Pick<SealedValue, 'address' | 'name'>;
