import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** A controller replica's lease, judged by the database's clock (table `controller_lease`, DESIGN 8.1). */
@Entity({ name: 'controller_lease' })
@Check('ck_controller_lease_expiry', 'expires_ts >= renewed_ts')
// The reaper looks for expired leases; a restart on the same endpoint for its predecessor.
@Index('ix_controller_lease_expires', ['expiresTs'])
@Index('ix_controller_lease_endpoint', ['endpoint'])
export class ControllerLease {
  @PrimaryColumn({ name: 'controller_id', type: 'uuid', primaryKeyConstraintName: 'pk_controller_lease' })
  controllerId!: string;

  @Column({ name: 'host_id', type: 'varchar', length: 255 })
  hostId!: string;

  /** `hostname:port` once the replica listens: a restart on the same endpoint reaps its predecessor at once. */
  @Column({ name: 'endpoint', type: 'varchar', length: 300, nullable: true })
  endpoint!: string | null;

  /** Start of the current unbroken run of renewals; only a replica held for a whole lease may reap others. */
  @Column({ name: 'held_since_ts', type: 'timestamptz', default: () => 'now()' })
  heldSinceTs!: Date;

  @Column({ name: 'renewed_ts', type: 'timestamptz', default: () => 'now()' })
  renewedTs!: Date;

  @Column({ name: 'expires_ts', type: 'timestamptz' })
  expiresTs!: Date;
}
