import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQueryDto, Scalar } from '#platform';
import { INSTANCE_STATUSES, type InstanceStatus } from '#database';

/** Query of `GET /instances`: paging and exact-match filters. */
export class ListInstancesQuery extends PageQueryDto {
  @ApiPropertyOptional({ maxLength: 255, description: 'exact host id' })
  @IsOptional()
  @Scalar()
  @IsString()
  @MaxLength(255)
  hostId?: string;

  @ApiPropertyOptional({ maxLength: 255, description: 'exact service id' })
  @IsOptional()
  @Scalar()
  @IsString()
  @MaxLength(255)
  serviceId?: string;

  @ApiPropertyOptional({ maxLength: 255, description: 'exact environment tag' })
  @IsOptional()
  @Scalar()
  @IsString()
  @MaxLength(255)
  envTag?: string;

  @ApiPropertyOptional({ enum: INSTANCE_STATUSES })
  @IsOptional()
  @Scalar()
  @IsIn(INSTANCE_STATUSES, { message: `status must be one of ${INSTANCE_STATUSES.join(', ')}` })
  status?: InstanceStatus;
}
