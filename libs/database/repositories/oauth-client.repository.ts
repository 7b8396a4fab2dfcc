import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { OAuthClient } from '../entities/oauth-client.entity.js';
import { Keyset, namedParameters, type KeysetPage, type PageWindow } from '../keyset.js';
import { BaseRepository, duplicateKeyOf } from '../repository.js';

/** The clients list's order: by client id, the primary key (unique, so it is its own tie-breaker). */
const CLIENT_KEYSET = new Keyset([{ sql: 'c.client_id', type: 'text' }]);

/** A client record as created; the secret arrives already hashed. */
export interface NewOAuthClient {
  readonly clientId: string;
  readonly description: string | null;
  readonly host: string | null;
  readonly sid: string | null;
  readonly envs: readonly string[];
  readonly scopes: readonly string[];
  readonly secretHash: string;
  readonly updateUser: string | null;
}

/** What the token endpoint needs to authenticate a client: the hashes that are valid right now. */
export interface ClientCredentials {
  readonly client: OAuthClient;
  /** The current hash, then the previous one while its grace period lasts (judged by the database clock). */
  readonly secretHashes: readonly string[];
}

/**
 * Whose clients a statement may touch (DESIGN 16): a host-bound admin's host only (never an operator
 * client, which has no host), or every client for a global admin.
 */
export type ClientOwner = { readonly host: string } | 'all';

/** The clients of the built-in issuer (DESIGN 10); every statement on `oauth_client` is here. */
@Injectable()
export class OAuthClientRepository extends BaseRepository {
  constructor(@InjectDataSource() db: DataSource) {
    super(db);
  }

  /** Inserts the record; an existing client id is a `DuplicateKeyError` (409), never checked first. */
  async create(client: NewOAuthClient): Promise<OAuthClient> {
    const repository = this.manager.getRepository(OAuthClient);
    try {
      await repository.insert({
        ...client,
        envs: [...client.envs],
        scopes: [...client.scopes],
        previousSecretHash: null,
        previousSecretUntil: null,
      });
    } catch (error) {
      throw duplicateKeyOf(error);
    }
    return repository.findOneByOrFail({ clientId: client.clientId });
  }

  find(clientId: string, owner: ClientOwner = 'all'): Promise<OAuthClient | null> {
    const where = owner === 'all' ? { clientId } : { clientId, host: owner.host };
    return this.manager.getRepository(OAuthClient).findOneBy(where);
  }

  async credentials(clientId: string): Promise<ClientCredentials | null> {
    const rows: (OAuthClient & { previousValid: boolean })[] = await this.manager
      .getRepository(OAuthClient)
      .createQueryBuilder('c')
      .addSelect('coalesce(c.previous_secret_until > now(), false)', 'previous_valid')
      .where('c.client_id = :clientId', { clientId })
      .getRawAndEntities()
      .then(({ entities, raw }) =>
        entities.map((entity, i) =>
          Object.assign(entity, { previousValid: Boolean((raw[i] as { previous_valid?: unknown }).previous_valid) }),
        ),
      );
    const client = rows[0];
    if (client === undefined) return null;
    const hashes = [client.secretHash];
    if (client.previousValid && client.previousSecretHash !== null) hashes.push(client.previousSecretHash);
    return { client, secretHashes: hashes };
  }

  /** The order of `page`, whose cursors carry a client id. */
  readonly keyset = CLIENT_KEYSET;

  /** A page in client id order (the primary key), from `window`'s offset or after its client; the total when asked. */
  async page(window: PageWindow, owner: ClientOwner): Promise<KeysetPage<OAuthClient>> {
    const query = this.manager.getRepository(OAuthClient).createQueryBuilder('c');
    if (owner !== 'all') query.where('c.host = :host', { host: owner.host });
    const count = window.withTotal ? query.clone().getCount() : undefined;
    if (window.after !== undefined) {
      const parameters: Record<string, unknown> = {};
      query.andWhere(CLIENT_KEYSET.after(window.after, namedParameters(parameters)), parameters);
    }
    for (const { sql, alias } of CLIENT_KEYSET.selectItems()) query.addSelect(sql, alias);
    for (const { sql, direction } of CLIENT_KEYSET.orderItems()) query.addOrderBy(sql, direction);
    const [read, total] = await Promise.all([
      query
        .offset(window.offset)
        .limit(window.limit + 1)
        .getRawAndEntities(),
      count,
    ]);
    const { rows, next } = CLIENT_KEYSET.pageOf(read.entities, window.limit, (_, i) => read.raw[i] as object);
    return { rows, next, ...(total === undefined ? {} : { total }) };
  }

  /** True when a client was deleted. */
  async delete(clientId: string, owner: ClientOwner): Promise<boolean> {
    const where = owner === 'all' ? { clientId } : { clientId, host: owner.host };
    const result = await this.manager.getRepository(OAuthClient).delete(where);
    return (result.affected ?? 0) > 0;
  }

  /**
   * The new hash becomes current at once; the old one stays valid for `graceSec` by the database's clock
   * (0: not at all). Null when there is no such client.
   */
  async rotateSecret(
    clientId: string,
    secretHash: string,
    graceSec: number,
    user: string | null,
    owner: ClientOwner,
    /** Scopes the caller may give: a client holding another is left alone (null: any). */
    grantable: readonly string[] | null = null,
  ): Promise<OAuthClient | null> {
    // `rows`, not TypeORM's `query`: that answers an update as [rows, count], never empty.
    const rows = await this.rows<{ client_id: string }>(
      `update oauth_client
          set previous_secret_hash = case when $3::int > 0 then secret_hash end,
              previous_secret_until = case when $3::int > 0 then now() + make_interval(secs => $3::int) end,
              secret_hash = $2, update_user = $4, update_ts = now()
        where client_id = $1 and ($5::text is null or host = $5) and ($6::text[] is null or scopes <@ $6::text[])
        returning client_id`,
      [clientId, secretHash, graceSec, user, owner === 'all' ? null : owner.host, grantable],
    );
    return rows.length === 0 ? null : this.find(clientId, owner);
  }
}
