import { Check, Column, Entity, PrimaryColumn } from 'typeorm';

/** A client of the built-in client-credentials issuer (table `oauth_client`, migration CreateOAuthClient). */
@Entity({ name: 'oauth_client' })
// A runtime client always carries its identity; only an operator client (DESIGN 16's admin scopes) may lack it.
@Check(
  'ck_oauth_client_runtime_identity',
  `(host is not null and sid is not null) or scopes && array['portal.admin', 'tags:admin', 'config:admin', 'clients:admin', 'registry:read']`,
)
@Check('ck_oauth_client_previous_secret', '(previous_secret_hash is null) = (previous_secret_until is null)')
export class OAuthClient {
  @PrimaryColumn({ name: 'client_id', type: 'varchar', length: 100, primaryKeyConstraintName: 'pk_oauth_client' })
  clientId!: string;

  @Column({ name: 'description', type: 'varchar', length: 500, nullable: true })
  description!: string | null;

  /** The `host` claim of every token issued to it; null only for an operator client. */
  @Column({ name: 'host', type: 'varchar', length: 255, nullable: true })
  host!: string | null;

  /** The `sid` claim of every token issued to it; null only for an operator client. */
  @Column({ name: 'sid', type: 'varchar', length: 255, nullable: true })
  sid!: string | null;

  /** The `env` values it may ask for; empty: it may not ask for one. */
  @Column({ name: 'envs', type: 'text', array: true, default: () => `'{}'` })
  envs!: string[];

  @Column({ name: 'scopes', type: 'text', array: true })
  scopes!: string[];

  /** `scrypt$N$r$p$salt$hash` (base64url parts); never the secret. */
  @Column({ name: 'secret_hash', type: 'varchar', length: 200 })
  secretHash!: string;

  /** The secret before the last rotation, accepted until `previousSecretUntil`. */
  @Column({ name: 'previous_secret_hash', type: 'varchar', length: 200, nullable: true })
  previousSecretHash!: string | null;

  @Column({ name: 'previous_secret_until', type: 'timestamptz', nullable: true })
  previousSecretUntil!: Date | null;

  @Column({ name: 'created_ts', type: 'timestamptz', default: () => 'now()' })
  createdTs!: Date;

  @Column({ name: 'update_user', type: 'varchar', length: 255, nullable: true })
  updateUser!: string | null;

  @Column({ name: 'update_ts', type: 'timestamptz', default: () => 'now()' })
  updateTs!: Date;
}
