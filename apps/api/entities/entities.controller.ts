import {
  Body,
  Controller,
  Delete,
  Get,
  Headers,
  HttpCode,
  Param,
  Post,
  Put,
  Query,
  Res,
  type Type,
} from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Authenticated, CurrentPrincipal, SCOPE_READ, SCOPE_WRITE, type Principal } from '#token-binding';
import { etagOf, parseIfMatch } from '../common/etag.js';
import { IdPipe } from '../common/id.pipe.js';
import type { TagView } from '../tags/tag.view.js';
import { BodyPipe } from './body.pipe.js';
import { EntitiesService } from './entities.service.js';
import type { EntityInput } from './dto/entity-body.dto.js';
import { ListEntitiesQuery } from './dto/list-entities.query.js';
import { TagIdsDto } from './dto/tag-ids.dto.js';
import type { EntityTypeDefinition } from './entity-types.js';
import type { EntityPage, EntityView } from './entity.view.js';

/** Sends the entity's version as its ETag and answers the entity. */
function withEtag(reply: FastifyReply, view: EntityView): EntityView {
  void reply.header('etag', etagOf(Number(view.aggregateVersion)));
  return view;
}

/** The HTTP surface of one entity type (DESIGN 5.2): one class per definition, all alike. */
export function entitiesController(def: EntityTypeDefinition): Type<unknown> {
  @Controller(def.path)
  class EntitiesController {
    constructor(private readonly entities: EntitiesService) {}

    @Post()
    @Authenticated(SCOPE_WRITE)
    async create(
      @CurrentPrincipal() principal: Principal,
      @Body(new BodyPipe(def.body)) body: EntityInput,
      @Res({ passthrough: true }) reply: FastifyReply,
    ): Promise<EntityView> {
      const view = await this.entities.create(def, principal, body);
      void reply.header('location', `/${def.path}/${String(view[def.idField])}`);
      return withEtag(reply, view);
    }

    @Get()
    @Authenticated(SCOPE_READ)
    list(@CurrentPrincipal() principal: Principal, @Query() query: ListEntitiesQuery): Promise<EntityPage> {
      return this.entities.list(def, principal, query);
    }

    @Get(':id')
    @Authenticated(SCOPE_READ)
    async get(
      @CurrentPrincipal() principal: Principal,
      @Param('id', IdPipe) id: string,
      @Res({ passthrough: true }) reply: FastifyReply,
    ): Promise<EntityView> {
      return withEtag(reply, await this.entities.get(def, principal, id));
    }

    @Put(':id')
    @Authenticated(SCOPE_WRITE)
    async update(
      @CurrentPrincipal() principal: Principal,
      @Param('id', IdPipe) id: string,
      @Body(new BodyPipe(def.body)) body: EntityInput,
      @Headers('if-match') ifMatch: string | undefined,
      @Res({ passthrough: true }) reply: FastifyReply,
    ): Promise<EntityView> {
      return withEtag(reply, await this.entities.update(def, principal, id, body, parseIfMatch(ifMatch)));
    }

    @Delete(':id')
    @HttpCode(204)
    @Authenticated(SCOPE_WRITE)
    async delete(
      @CurrentPrincipal() principal: Principal,
      @Param('id', IdPipe) id: string,
      @Headers('if-match') ifMatch: string | undefined,
    ): Promise<void> {
      await this.entities.delete(def, principal, id, parseIfMatch(ifMatch));
    }

    @Get(':id/tags')
    @Authenticated(SCOPE_READ)
    tags(@CurrentPrincipal() principal: Principal, @Param('id', IdPipe) id: string): Promise<TagView[]> {
      return this.entities.tags(def, principal, id);
    }

    @Put(':id/tags')
    @Authenticated(SCOPE_WRITE)
    async setTags(
      @CurrentPrincipal() principal: Principal,
      @Param('id', IdPipe) id: string,
      @Body() body: TagIdsDto,
      @Headers('if-match') ifMatch: string | undefined,
      @Res({ passthrough: true }) reply: FastifyReply,
    ): Promise<EntityView> {
      return withEtag(reply, await this.entities.setTags(def, principal, id, body.tagIds, parseIfMatch(ifMatch)));
    }
  }
  // Distinct class names keep Nest's logs and route listings readable.
  const name = `${def.path[0]?.toUpperCase() ?? ''}${def.path.slice(1)}Controller`;
  Object.defineProperty(EntitiesController, 'name', { value: name });
  return EntitiesController;
}
