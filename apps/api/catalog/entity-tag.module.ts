import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Tag } from '../tags/tag.entity.js';
import { entitiesController } from './entities.controller.js';
import { EntitiesService } from './entities.service.js';
import { EntityTag } from './entity-tag.entity.js';
import { ENTITY_TYPES } from './entity-types.js';

/** Schemas, products and documents and their tags (DESIGN 5): one controller per type, one service. */
@Module({
  imports: [TypeOrmModule.forFeature([Tag, EntityTag, ...ENTITY_TYPES.map((def) => def.entity)])],
  controllers: ENTITY_TYPES.map(entitiesController),
  providers: [EntitiesService],
  exports: [EntitiesService],
})
export class EntityTagModule {}
