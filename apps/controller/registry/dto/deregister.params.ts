import { IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { NoControlChars } from '#platform';

/** The longest `reason` a deregistration may give (DESIGN 8: a short text, logged). */
export const MAX_DEREGISTER_REASON = 200;

/** `service/deregister` params. */
export class DeregisterParams {
  @IsString()
  @Length(1, 64)
  runtimeInstanceId!: string;

  /** Why the runtime leaves (upstream protocol): logged, never stored. */
  @IsOptional()
  @IsString()
  @MaxLength(MAX_DEREGISTER_REASON)
  @NoControlChars()
  reason?: string;

  @IsOptional()
  @IsString()
  jwt?: string;
}
