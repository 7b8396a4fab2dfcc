import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';

export const MAX_GRACE_SEC = 86_400;

/** Body of `POST /oauth2/clients/{clientId}/secret`. */
export class RotateSecretDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: MAX_GRACE_SEC, default: 0 })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(MAX_GRACE_SEC)
  graceSec = 0;
}
