import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { Scalar } from '#platform';

/** Query of GET /tags/{tagId} (DESIGN 12). */
export class TagReadQuery {
  @ApiPropertyOptional({ enum: ['usage'], description: 'usage: add per-type counts of the entities you can see' })
  @IsOptional()
  @Scalar()
  @IsIn(['usage'])
  include?: 'usage';
}
