import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Length, Matches, Max, MaxLength, Min } from 'class-validator';
import { PROTOCOLS, type Protocol } from '#database';
import { IsStringMap, NO_CONTROL_CHARS, trim, trimToUndefined } from './validators.js';

/**
 * `service/register` params (DESIGN 8). No host field: the host is the controller's own, and any
 * host-like field a client sends is dropped with the other unknown fields.
 */
export class RegisterParams {
  @Transform(trim)
  @IsString()
  @Length(1, 255)
  @Matches(NO_CONTROL_CHARS, { message: 'serviceId must not contain control characters' })
  serviceId!: string;

  /** Blank counts as absent, as in the binding rule. */
  @IsOptional()
  @Transform(trimToUndefined)
  @IsString()
  @MaxLength(255)
  @Matches(NO_CONTROL_CHARS, { message: 'envTag must not contain control characters' })
  envTag?: string;

  @IsOptional()
  @IsString()
  @MaxLength(100)
  version?: string;

  @IsOptional()
  @IsIn(PROTOCOLS, { message: `protocol must be one of ${PROTOCOLS.join(', ')}` })
  protocol?: Protocol;

  @IsOptional()
  @Transform(trim)
  @IsString()
  @Length(1, 255)
  address?: string;

  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(65535)
  port?: number;

  @IsOptional()
  @IsStringMap()
  tags?: Record<string, string>;

  /** The upstream protocol's token, accepted when the upgrade carried no `Authorization` header. */
  @IsOptional()
  @IsString()
  jwt?: string;
}
