import { Module } from '@nestjs/common';
import { entitiesController } from './entities.controller.js';
import { EntitiesService } from './entities.service.js';
import { ENTITY_TYPES } from './entity-types.js';

/** Schemas, products and documents and their tags (DESIGN 5): one controller per type, one service. */
@Module({
  controllers: ENTITY_TYPES.map(entitiesController),
  providers: [EntitiesService],
  exports: [EntitiesService],
})
export class EntityTagModule {}
