import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { BaseRepository } from '../repository.js';

/** Advisory lock of the encryption switch: writers hold it shared, the switch's change exclusively. */
const SWITCH_LOCK = 7_243_017;

/** A data key as stored: wrapped under the key encryption key `kid` (DESIGN 17). */
export interface StoredDataKey {
  readonly dataKeyId: string;
  readonly kid: string;
  readonly wrapped: Buffer;
}

/** How many rows of each table still hold plaintext (readiness and `keys:encrypt-existing`). */
export interface PlaintextRows {
  readonly properties: number;
  readonly files: number;
  readonly versions: number;
}

/**
 * The data keys of config values and the deployment's encryption switch (DESIGN 17): every statement
 * about `config_data_key` and `config_encryption`. Keys arrive here wrapped; nothing here sees key material.
 */
@Injectable()
export class ConfigKeyRepository extends BaseRepository {
  constructor(@InjectDataSource() db: DataSource) {
    super(db);
  }

  /** Stores wrapped data keys; answers their ids in the order given. */
  async insert(keys: readonly { kid: string; wrapped: Buffer }[]): Promise<string[]> {
    if (keys.length === 0) return [];
    const rows = await this.manager.query<{ data_key_id: string }[]>(
      `insert into config_data_key (kid, wrapped)
       select k.kid, k.wrapped from unnest($1::varchar[], $2::bytea[]) with ordinality as k(kid, wrapped, n)
        order by k.n
       returning data_key_id`,
      [keys.map((k) => k.kid), keys.map((k) => k.wrapped)],
    );
    // Identity values follow the insert's order, which follows `order by n`.
    return rows.map((r) => String(r.data_key_id)).sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
  }

  async byIds(ids: readonly string[]): Promise<StoredDataKey[]> {
    if (ids.length === 0) return [];
    const rows = await this.rows<{ data_key_id: string; kid: string; wrapped: Buffer }>(
      'select data_key_id, kid, wrapped from config_data_key where data_key_id = any($1::bigint[])',
      [ids],
    );
    return rows.map((r) => ({ dataKeyId: String(r.data_key_id), kid: r.kid, wrapped: r.wrapped }));
  }

  /** How many data keys each kid wraps, by kid. */
  async countByKid(): Promise<Map<string, number>> {
    const rows = await this.rows<{ kid: string; keys: number }>(
      'select kid, count(*)::int as keys from config_data_key group by kid order by kid',
    );
    return new Map(rows.map((r) => [r.kid, r.keys]));
  }

  /** Up to `limit` data keys not wrapped under `kid`, lowest id first, locked against a concurrent rewrap. */
  async notWrappedUnder(kid: string, limit: number): Promise<StoredDataKey[]> {
    const rows = await this.manager.query<{ data_key_id: string; kid: string; wrapped: Buffer }[]>(
      `select data_key_id, kid, wrapped from config_data_key where kid <> $1
        order by data_key_id limit $2 for update skip locked`,
      [kid, limit],
    );
    return rows.map((r) => ({ dataKeyId: String(r.data_key_id), kid: r.kid, wrapped: r.wrapped }));
  }

  /** Replaces the wrapping of data keys (same keys, another key encryption key). */
  async rewrap(keys: readonly StoredDataKey[]): Promise<void> {
    if (keys.length === 0) return;
    await this.manager.query(
      `update config_data_key d set kid = k.kid, wrapped = k.wrapped
         from unnest($1::bigint[], $2::varchar[], $3::bytea[]) as k(id, kid, wrapped)
        where d.data_key_id = k.id`,
      [keys.map((k) => k.dataKeyId), keys.map((k) => k.kid), keys.map((k) => k.wrapped)],
    );
  }

  /**
   * Whether new values are written sealed. In a transaction it first takes the switch's lock shared, so
   * `keys:encrypt-existing` turning it on waits for writers that read it off (their plaintext rows commit
   * before it scans), and a writer that starts meanwhile reads it on.
   */
  async encryptedWrites(): Promise<boolean> {
    if (this.tx !== undefined) await this.manager.query('select pg_advisory_xact_lock_shared($1)', [SWITCH_LOCK]);
    const rows = await this.rows<{ encrypted_writes: boolean }>('select encrypted_writes from config_encryption');
    return rows[0]?.encrypted_writes ?? true;
  }

  /**
   * Fresh statistics for the tables a conversion filled. A session plans its foreign-key checks once and keeps
   * the plan: planned on statistics of a near-empty `config_data_key`, each sealed write's check would scan
   * every key until autovacuum analysed it again (docs/performance.md). Without ownership PostgreSQL only warns.
   */
  async analyzeSealedTables(): Promise<void> {
    await this.manager.query(
      'analyze config_data_key, config_layer, config_property, config_file, config_file_content, config_layer_version',
    );
  }

  /** Turns encrypted writes on, once every writer that read the switch off has committed; idempotent. */
  async enableEncryptedWrites(): Promise<void> {
    await this.manager.query('select pg_advisory_xact_lock($1)', [SWITCH_LOCK]);
    await this.manager.query(
      `insert into config_encryption (encrypted_writes) values (true)
       on conflict on constraint pk_config_encryption do update set encrypted_writes = true`,
    );
  }

  /** Rows that still hold plaintext values. */
  async plaintextRows(): Promise<PlaintextRows> {
    const rows = await this.rows<PlaintextRows>(
      `select (select count(*)::int from config_property where sealed is null) as properties,
              (select count(*)::int from config_file where content_id is null) as files,
              (select count(*)::int from config_layer_version where sealed_properties is null) as versions`,
    );
    return rows[0] ?? { properties: 0, files: 0, versions: 0 };
  }
}
