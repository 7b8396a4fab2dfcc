import { IsOptional, IsString, MaxLength } from 'class-validator';
import { Scalar } from '#platform';
import { PageQueryDto } from '../../common/paging.js';

/** Query of GET /tags (DESIGN 4.2). */
export class ListTagsQuery extends PageQueryDto {
  @IsOptional()
  @Scalar()
  @IsString()
  @MaxLength(100)
  tagName?: string;

  @IsOptional()
  @Scalar()
  @IsString()
  @MaxLength(1024)
  tagDesc?: string;

  @IsOptional()
  @Scalar()
  @IsString()
  @MaxLength(22)
  hostId?: string;

  @IsOptional()
  @Scalar()
  @IsString()
  @MaxLength(1024)
  q?: string;

  @IsOptional()
  @Scalar()
  @IsString()
  @MaxLength(200)
  sort?: string;
}
