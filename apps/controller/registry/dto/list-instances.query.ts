import { IsIn, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { Scalar, toInt } from '#platform';
import { INSTANCE_STATUSES, type InstanceStatus } from '../runtime-instance.entity.js';

export const MAX_PAGE_SIZE = 1000;

/** Query of `GET /instances`: paging and exact-match filters. */
export class ListInstancesQuery {
  @IsOptional()
  @Scalar(toInt)
  @IsInt()
  @Min(0)
  offset = 0;

  @IsOptional()
  @Scalar(toInt)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit = 20;

  @IsOptional()
  @Scalar()
  @IsString()
  @MaxLength(255)
  hostId?: string;

  @IsOptional()
  @Scalar()
  @IsString()
  @MaxLength(255)
  serviceId?: string;

  @IsOptional()
  @Scalar()
  @IsString()
  @MaxLength(255)
  envTag?: string;

  @IsOptional()
  @Scalar()
  @IsIn(INSTANCE_STATUSES, { message: `status must be one of ${INSTANCE_STATUSES.join(', ')}` })
  status?: InstanceStatus;
}
