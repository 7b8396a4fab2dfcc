import type { Protocol } from '#database';
import { EnvTagField, JwtField, ProtocolField, ServiceIdField } from './service-fields.js';

/** `discovery/lookup` params: omitted filters match every connected instance of the service. */
export class LookupParams {
  @ServiceIdField()
  serviceId!: string;

  @EnvTagField()
  envTag?: string;

  @ProtocolField()
  protocol?: Protocol;

  @JwtField()
  jwt?: string;
}
