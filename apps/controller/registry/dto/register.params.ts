import { Transform } from 'class-transformer';
import { IsDefined, IsInt, IsOptional, IsString, Length, Max, MaxLength, Min, ValidateIf } from 'class-validator';
import type { Protocol } from '#database';
import { NoControlChars, OpaqueJson, trim, trimToUndefined } from '#platform';
import { EnvTagField, JwtField, ProtocolField, ServiceIdField } from './service-fields.js';
import { IsStringMap } from './validators.js';

export { MAX_ENV_TAG } from './service-fields.js';

/** The config server's limits for a product's address parts (DESIGN 7), so a registration can name any product layer. */
export const MAX_PRODUCT_ID = 128;
export const MAX_PRODUCT_VERSION = 64;

/** Either product part given makes both required, so the other is then `... is required` (blank counts as absent). */
const namesProduct = (params: RegisterParams): boolean =>
  params.productId !== undefined || params.productVersion !== undefined;

/**
 * `service/register` params (DESIGN 8). No host field: the host is the controller's own, and any
 * host-like field a client sends is dropped with the other unknown fields.
 */
export class RegisterParams {
  @ServiceIdField()
  serviceId!: string;

  /** Blank counts as absent, as in the binding rule. */
  @EnvTagField()
  envTag?: string;

  @IsOptional()
  @IsString()
  @MaxLength(100)
  @NoControlChars()
  version?: string;

  @ProtocolField()
  protocol?: Protocol;

  @IsOptional()
  @Transform(trim)
  @IsString()
  @Length(1, 255)
  @NoControlChars()
  address?: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(65535)
  port?: number;

  /** The runtime's own data: keys named `__proto__`, `constructor` or `prototype` are kept like any other. */
  @IsOptional()
  @IsStringMap()
  @OpaqueJson()
  tags?: Record<string, string>;

  /** The product whose layers feed this runtime's config too (DESIGN 14): `config/changed` for them. */
  @ValidateIf(namesProduct)
  @Transform(trimToUndefined)
  @IsDefined()
  @IsString()
  @Length(1, MAX_PRODUCT_ID)
  @NoControlChars()
  productId?: string;

  @ValidateIf(namesProduct)
  @Transform(trimToUndefined)
  @IsDefined()
  @IsString()
  @Length(1, MAX_PRODUCT_VERSION)
  @NoControlChars()
  productVersion?: string;

  /** The upstream protocol's token, accepted when the upgrade carried no `Authorization` header. */
  @JwtField()
  jwt?: string;
}
