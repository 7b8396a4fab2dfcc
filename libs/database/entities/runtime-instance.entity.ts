import { Check, Column, Entity, Index, PrimaryColumn, Unique } from 'typeorm';

export const PROTOCOLS = ['http', 'https', 'ws', 'wss'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

export const INSTANCE_STATUSES = ['connected', 'disconnected', 'deregistered'] as const;
export type InstanceStatus = (typeof INSTANCE_STATUSES)[number];

/** A registered runtime instance (table `runtime_instance`, migration CreateRegistry). */
@Entity({ name: 'runtime_instance' })
// NULLS NOT DISTINCT in the migration (one row per identity even without env, address or port): TypeORM cannot say it.
@Unique('uq_runtime_instance_identity', ['hostId', 'serviceId', 'envTag', 'address', 'port'])
@Check('ck_runtime_instance_protocol', `protocol in (${PROTOCOLS.map((p) => `'${p}'`).join(', ')})`)
@Check('ck_runtime_instance_port', 'port between 1 and 65535')
@Check('ck_runtime_instance_status', `status in (${INSTANCE_STATUSES.map((s) => `'${s}'`).join(', ')})`)
@Check('ck_runtime_instance_tags', `jsonb_typeof(tags) = 'object'`)
// Shutdown and the last-seen updates look up the connected instances of one controller process.
@Index('ix_runtime_instance_connected_controller', ['controllerId'], { where: `status = 'connected'` })
// The operators' list filters by service (and status) across hosts.
@Index('ix_runtime_instance_service', ['serviceId', 'status'])
export class RuntimeInstance {
  @PrimaryColumn({
    name: 'runtime_instance_id',
    type: 'varchar',
    length: 22,
    primaryKeyConstraintName: 'pk_runtime_instance',
  })
  runtimeInstanceId!: string;

  /** Always the registering controller's `CONTROLLER_HOST_ID`, never a value from the message. */
  @Column({ name: 'host_id', type: 'varchar', length: 255 })
  hostId!: string;

  @Column({ name: 'service_id', type: 'varchar', length: 255 })
  serviceId!: string;

  @Column({ name: 'env_tag', type: 'varchar', length: 255, nullable: true })
  envTag!: string | null;

  @Column({ name: 'version', type: 'varchar', length: 100, nullable: true })
  version!: string | null;

  @Column({ name: 'protocol', type: 'varchar', length: 5, nullable: true })
  protocol!: Protocol | null;

  @Column({ name: 'address', type: 'varchar', length: 255, nullable: true })
  address!: string | null;

  @Column({ name: 'port', type: 'integer', nullable: true })
  port!: number | null;

  @Column({ name: 'tags', type: 'jsonb', default: () => `'{}'` })
  tags!: Record<string, string>;

  @Column({ name: 'status', type: 'varchar', length: 16 })
  status!: InstanceStatus;

  @Column({ name: 'connected_ts', type: 'timestamptz', default: () => 'now()' })
  connectedTs!: Date;

  @Column({ name: 'last_seen_ts', type: 'timestamptz', default: () => 'now()' })
  lastSeenTs!: Date;

  @Column({ name: 'disconnected_ts', type: 'timestamptz', nullable: true })
  disconnectedTs!: Date | null;

  /** The controller process (a UUID made at its start) that holds, or last held, the connection. */
  @Column({ name: 'controller_id', type: 'uuid' })
  controllerId!: string;

  /** The WebSocket connection (a UUID per socket) that registered it last. */
  @Column({ name: 'connection_id', type: 'uuid', nullable: true })
  connectionId!: string | null;
}
