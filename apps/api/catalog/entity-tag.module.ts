import { Module } from '@nestjs/common';
import { entitiesController } from './entities.controller.js';
import { EntitiesService } from './entities.service.js';
import { ENTITY_TYPES } from './entity-types.js';
import { TagBatchController } from './tag-batch.controller.js';
import { TagBatchService } from './tag-batch.service.js';

/** Schemas, products and documents and their tags (DESIGN 5): one controller per type, one service. */
@Module({
  controllers: [...ENTITY_TYPES.map(entitiesController), TagBatchController],
  providers: [EntitiesService, TagBatchService],
  exports: [EntitiesService],
})
export class EntityTagModule {}
