import { Transform } from 'class-transformer';
import { IsIn, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { PROTOCOLS, type Protocol } from '#database';
import { NoControlChars, trim, trimToUndefined } from '#platform';

/** `discovery/lookup` params: omitted filters match every connected instance of the service. */
export class LookupParams {
  @Transform(trim)
  @IsString()
  @Length(1, 255)
  @NoControlChars()
  serviceId!: string;

  @IsOptional()
  @Transform(trimToUndefined)
  @IsString()
  @MaxLength(255)
  @NoControlChars()
  envTag?: string;

  @IsOptional()
  @IsIn(PROTOCOLS, { message: `protocol must be one of ${PROTOCOLS.join(', ')}` })
  protocol?: Protocol;

  @IsOptional()
  @IsString()
  jwt?: string;
}
