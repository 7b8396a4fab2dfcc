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
import {
  ApiBody,
  ApiCreatedResponse,
  ApiHeader,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { problemResponse } from '#platform';
import { Access, CurrentPrincipal, type Principal } from '#token-binding';
import { ETAG_HEADER, IF_MATCH_HEADER, locationHeader, PRECONDITION_FAILED } from '../common/api-docs.js';
import { etagOf, parseIfMatch } from '../common/etag.js';
import { IdPipe } from '../common/id.pipe.js';
import { TagView } from '../tags/tag.view.js';
import { BodyPipe } from './body.pipe.js';
import { EntitiesService } from './entities.service.js';
import type { EntityInput } from './dto/entity-body.dto.js';
import { ListEntitiesQuery } from './dto/list-entities.query.js';
import { MAX_TAGS_PER_ENTITY } from './dto/fields.js';
import { TagIdsDto } from './dto/tag-ids.dto.js';
import type { EntityTypeDefinition } from './entity-types.js';
import { entityViewClasses, pascal, type EntityPage, type EntityView } from './entity.view.js';

/** Sends the entity's version as its ETag and answers the entity. */
function withEtag(reply: FastifyReply, view: EntityView): EntityView {
  void reply.header('etag', etagOf(Number(view.aggregateVersion)));
  return view;
}

/**
 * The HTTP surface of one entity type (DESIGN 5.2): one class per definition, all alike, documented
 * from the definition (its body class, a view class built from its columns, its sort keys).
 */
export function entitiesController(def: EntityTypeDefinition): Type<unknown> {
  const { view: View, page: Page } = entityViewClasses(def);
  const idParam = ApiParam({ name: 'id', description: `the ${def.idField}; an id that cannot exist is 404` });
  const notFound = ApiResponse(problemResponse(404, `No such ${def.entityType} (or another host's)`));
  const badTags = `unknown or invisible tag ids (listed), more than ${MAX_TAGS_PER_ENTITY} tags`;

  @ApiTags(def.path)
  @Controller(def.path)
  class EntitiesController {
    constructor(private readonly entities: EntitiesService) {}

    @Post()
    @ApiOperation({ summary: `Create a ${def.entityType}, optionally with its tags` })
    @Access('tags:write', 'own-host', { hostIn: [{ body: 'hostId' }] })
    @ApiBody({ type: def.body })
    @ApiCreatedResponse({ type: View, headers: { ...locationHeader(`/${def.path}/{${def.idField}}`), ...ETAG_HEADER } })
    @ApiResponse(problemResponse(400, `Invalid body (errors names each field), ${badTags}`))
    @ApiResponse(problemResponse(409, `A ${def.entityType} with that ${def.idField} already exists`))
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
    @Access('tags:read', 'own-host', { hostIn: [{ query: 'hostId' }] })
    @ApiOperation({
      summary: `List ${def.path}, filtered by fields and tag names, paged`,
      description: `sort keys: ${[...def.sortFields, def.idField, 'updateTs'].join(', ')} (default ${def.sortFields[0]})`,
    })
    @ApiOkResponse({ type: Page })
    @ApiResponse(problemResponse(400, 'Invalid, unknown or repeated query parameter, or an unknown sort key'))
    list(@CurrentPrincipal() principal: Principal, @Query() query: ListEntitiesQuery): Promise<EntityPage> {
      return this.entities.list(def, principal, query);
    }

    @Get(':id')
    @ApiOperation({ summary: `Read one ${def.entityType}` })
    @Access('tags:read', 'own-host')
    @idParam
    @ApiOkResponse({ type: View, headers: ETAG_HEADER })
    @notFound
    async get(
      @CurrentPrincipal() principal: Principal,
      @Param('id', IdPipe) id: string,
      @Res({ passthrough: true }) reply: FastifyReply,
    ): Promise<EntityView> {
      return withEtag(reply, await this.entities.get(def, principal, id));
    }

    @Put(':id')
    @ApiOperation({ summary: `Replace a ${def.entityType} (and its tags when tagIds is sent)` })
    @Access('tags:write', 'own-host', { hostIn: [{ body: 'hostId' }] })
    @idParam
    @ApiHeader(IF_MATCH_HEADER)
    @ApiBody({ type: def.body, description: 'replaces every field; without tagIds the links stay as they are' })
    @ApiOkResponse({ type: View, headers: ETAG_HEADER })
    @ApiResponse(problemResponse(400, `Invalid body, a body ${def.idField} different from the path, ${badTags}`))
    @notFound
    @ApiResponse(PRECONDITION_FAILED)
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
    @ApiOperation({ summary: `Delete a ${def.entityType} and its tag links` })
    @HttpCode(204)
    @Access('tags:write', 'own-host')
    @idParam
    @ApiHeader(IF_MATCH_HEADER)
    @ApiNoContentResponse({ description: 'Deleted, with its tag links' })
    @notFound
    @ApiResponse(PRECONDITION_FAILED)
    async delete(
      @CurrentPrincipal() principal: Principal,
      @Param('id', IdPipe) id: string,
      @Headers('if-match') ifMatch: string | undefined,
    ): Promise<void> {
      await this.entities.delete(def, principal, id, parseIfMatch(ifMatch));
    }

    @Get(':id/tags')
    @ApiOperation({ summary: `The tags of a ${def.entityType}` })
    @Access('tags:read', 'own-host')
    @idParam
    @ApiOkResponse({ type: [TagView], description: 'its visible tags, sorted by tagName' })
    @notFound
    tags(@CurrentPrincipal() principal: Principal, @Param('id', IdPipe) id: string): Promise<TagView[]> {
      return this.entities.tags(def, principal, id);
    }

    @Put(':id/tags')
    @ApiOperation({ summary: `Replace the tags of a ${def.entityType}` })
    @Access('tags:write', 'own-host')
    @idParam
    @ApiHeader(IF_MATCH_HEADER)
    @ApiBody({ type: TagIdsDto })
    @ApiOkResponse({ type: View, headers: ETAG_HEADER, description: `the ${def.entityType}, its version moved on` })
    @ApiResponse(problemResponse(400, `Invalid body, ${badTags}`))
    @notFound
    @ApiResponse(PRECONDITION_FAILED)
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
  Object.defineProperty(EntitiesController, 'name', { value: `${pascal(def.path)}Controller` });
  return EntitiesController;
}
