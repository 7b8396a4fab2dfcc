import { ApiProperty } from '@nestjs/swagger';
import { INSTANCE_STATUSES, PROTOCOLS, type InstanceStatus, type Protocol, type RuntimeInstance } from '#database';
import { isoTime } from '#platform';
import { PageFields } from '../platform/paging.js';

/** An instance in `GET /instances` (operators); a class only so the OpenAPI document can describe it. */
export class InstanceView {
  @ApiProperty({ example: 'AZNbq1s3dHqQeJ2dn8xv1A' })
  readonly runtimeInstanceId!: string;

  @ApiProperty({ description: "the registering controller's CONTROLLER_HOST_ID" })
  readonly hostId!: string;

  @ApiProperty({ example: 'petstore', description: "the token's sid" })
  readonly serviceId!: string;

  @ApiProperty({ type: String, nullable: true, example: 'prod' })
  readonly envTag!: string | null;

  @ApiProperty({ type: String, nullable: true, example: '1.4.2' })
  readonly version!: string | null;

  @ApiProperty({ enum: PROTOCOLS, nullable: true })
  readonly protocol!: Protocol | null;

  @ApiProperty({ type: String, nullable: true, example: '10.0.0.7' })
  readonly address!: string | null;

  @ApiProperty({ type: 'integer', nullable: true, minimum: 1, maximum: 65535, example: 8443 })
  readonly port!: number | null;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: { zone: 'a' } })
  readonly tags!: Readonly<Record<string, string>>;

  @ApiProperty({ enum: INSTANCE_STATUSES })
  readonly status!: InstanceStatus;

  @ApiProperty({ format: 'date-time' })
  readonly connectedTs!: string;

  @ApiProperty({ format: 'date-time' })
  readonly lastSeenTs!: string;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  readonly disconnectedTs!: string | null;

  @ApiProperty({ format: 'uuid', description: 'the controller process that holds, or last held, the connection' })
  readonly controllerId!: string;
}

export class InstancePage extends PageFields {
  @ApiProperty({ type: [InstanceView] })
  readonly instances!: readonly InstanceView[];
}

/** A node in a `discovery/lookup` result: where a connected instance can be reached. */
export type NodeView = Pick<
  InstanceView,
  'runtimeInstanceId' | 'envTag' | 'version' | 'protocol' | 'address' | 'port' | 'tags'
>;

export function toInstanceView(instance: RuntimeInstance): InstanceView {
  return {
    ...toNodeView(instance),
    hostId: instance.hostId,
    serviceId: instance.serviceId,
    status: instance.status,
    connectedTs: isoTime(instance.connectedTs),
    lastSeenTs: isoTime(instance.lastSeenTs),
    disconnectedTs: instance.disconnectedTs ? isoTime(instance.disconnectedTs) : null,
    controllerId: instance.controllerId,
  };
}

export function toNodeView(instance: RuntimeInstance): NodeView {
  return {
    runtimeInstanceId: instance.runtimeInstanceId,
    envTag: instance.envTag,
    version: instance.version,
    protocol: instance.protocol,
    address: instance.address,
    port: instance.port,
    tags: instance.tags,
  };
}
