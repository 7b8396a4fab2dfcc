import { Transform } from 'class-transformer';
import { IsIn, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { PROTOCOLS, type Protocol } from '#database';
import { trim, trimToUndefined } from './validators.js';

/** `discovery/lookup` params: omitted filters match every connected instance of the service. */
export class LookupParams {
  @Transform(trim)
  @IsString()
  @Length(1, 255)
  serviceId!: string;

  @IsOptional()
  @Transform(trimToUndefined)
  @IsString()
  @MaxLength(255)
  envTag?: string;

  @IsOptional()
  @IsIn(PROTOCOLS, { message: `protocol must be one of ${PROTOCOLS.join(', ')}` })
  protocol?: Protocol;

  @IsOptional()
  @IsString()
  jwt?: string;
}
