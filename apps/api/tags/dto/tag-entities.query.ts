import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { PageQueryDto, Scalar } from '#platform';
import { ENTITY_TYPES } from '../../catalog/entity-types.js';

const TYPES = ENTITY_TYPES.map((def) => def.entityType);

/** Query of GET /tags/{tagId}/entities (DESIGN 12). */
export class TagEntitiesQuery extends PageQueryDto {
  @ApiPropertyOptional({ enum: TYPES, description: 'only entities of this type' })
  @IsOptional()
  @Scalar()
  @IsIn(TYPES)
  entityType?: string;
}
