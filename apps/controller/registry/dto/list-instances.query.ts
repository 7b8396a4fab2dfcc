import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQueryDto, Scalar } from '#platform';
import { INSTANCE_STATUSES, type InstanceStatus } from '../runtime-instance.entity.js';

/** Query of `GET /instances`: paging and exact-match filters. */
export class ListInstancesQuery extends PageQueryDto {
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
