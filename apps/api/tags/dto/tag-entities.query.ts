import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { ENTITY_TYPE_NAMES } from '#database';
import { PageQueryDto, Scalar } from '#platform';

/** Query of GET /tags/{tagId}/entities (DESIGN 12). */
export class TagEntitiesQuery extends PageQueryDto {
  @ApiPropertyOptional({ enum: [...ENTITY_TYPE_NAMES], description: 'only entities of this type' })
  @IsOptional()
  @Scalar()
  @IsIn([...ENTITY_TYPE_NAMES])
  entityType?: string;
}
