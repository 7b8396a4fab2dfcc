import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Put, Query, Res } from '@nestjs/common';
import {
  ApiHeader,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiCreatedResponse,
  ApiOperation,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { problemResponse } from '#platform';
import { Access, CurrentPrincipal, type Principal } from '#token-binding';
import { ETAG_HEADER, IF_MATCH_HEADER, locationHeader, PRECONDITION_FAILED } from '../common/api-docs.js';
import { etagOf, parseIfMatch } from '../common/etag.js';
import { IdPipe } from '../common/id.pipe.js';
import { ListTagsQuery } from './dto/list-tags.query.js';
import { TagBodyDto } from './dto/tag-body.dto.js';
import { TagEntitiesQuery } from './dto/tag-entities.query.js';
import { TagReadQuery } from './dto/tag-read.query.js';
import { TagsService } from './tags.service.js';
import { TaggedEntityPage, TagPage, TagView } from './tag.view.js';

@ApiTags('tags')
@Controller('tags')
export class TagsController {
  constructor(private readonly tags: TagsService) {}

  @Post()
  @ApiOperation({ summary: 'Create a tag' })
  @Access('tags:write', 'own-host', { hostIn: [{ body: 'hostId' }] })
  @ApiCreatedResponse({
    type: TagView,
    headers: { ...locationHeader('/tags/{tagId}'), ...ETAG_HEADER },
  })
  @ApiResponse(problemResponse(400, 'Invalid body (errors names each field)'))
  @ApiResponse(problemResponse(409, 'Duplicate tagName (case-insensitive) or tagId'))
  async create(
    @CurrentPrincipal() principal: Principal,
    @Body() body: TagBodyDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<TagView> {
    const tag = await this.tags.create(principal, body);
    void reply.header('location', `/tags/${tag.tagId}`).header('etag', etagOf(tag.aggregateVersion));
    return tag;
  }

  @Get()
  @ApiOperation({ summary: 'List tags, filtered, sorted and paged' })
  @Access('tags:read', 'own-host', { hostIn: [{ query: 'hostId' }] })
  @ApiOkResponse({ type: TagPage })
  @ApiResponse(problemResponse(400, 'Invalid or repeated query parameter'))
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListTagsQuery): Promise<TagPage> {
    return this.tags.list(principal, query);
  }

  @Get(':tagId')
  @ApiOperation({ summary: 'Read one tag' })
  @Access('tags:read', 'own-host')
  @ApiOkResponse({ type: TagView, headers: ETAG_HEADER })
  @ApiResponse(problemResponse(400, 'Invalid or repeated query parameter'))
  @ApiResponse(problemResponse(404, "No such tag (or another host's)"))
  async get(
    @CurrentPrincipal() principal: Principal,
    @Param('tagId', IdPipe) tagId: string,
    @Query() query: TagReadQuery,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<TagView> {
    const tag = await this.tags.get(principal, tagId, query.include);
    void reply.header('etag', etagOf(tag.aggregateVersion));
    return tag;
  }

  @Get(':tagId/entities')
  @ApiOperation({ summary: 'The entities carrying a tag (reverse lookup), by type then id, paged' })
  @Access('tags:read', 'own-host')
  @ApiOkResponse({ type: TaggedEntityPage })
  @ApiResponse(problemResponse(400, 'Invalid or repeated query parameter'))
  @ApiResponse(problemResponse(404, "No such tag (or another host's)"))
  entities(
    @CurrentPrincipal() principal: Principal,
    @Param('tagId', IdPipe) tagId: string,
    @Query() query: TagEntitiesQuery,
  ): Promise<TaggedEntityPage> {
    return this.tags.entities(principal, tagId, query);
  }

  @Put(':tagId')
  @ApiOperation({ summary: 'Replace a tag' })
  @Access('tags:write', 'own-host', { hostIn: [{ body: 'hostId' }] })
  @ApiHeader(IF_MATCH_HEADER)
  @ApiOkResponse({ type: TagView, headers: ETAG_HEADER })
  @ApiResponse(problemResponse(400, 'Invalid body, or a body tagId different from the path'))
  @ApiResponse(problemResponse(404, "No such tag (or another host's)"))
  @ApiResponse(problemResponse(409, 'Duplicate tagName'))
  @ApiResponse(PRECONDITION_FAILED)
  async update(
    @CurrentPrincipal() principal: Principal,
    @Param('tagId', IdPipe) tagId: string,
    @Body() body: TagBodyDto,
    @Headers('if-match') ifMatch: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<TagView> {
    const tag = await this.tags.update(principal, tagId, body, parseIfMatch(ifMatch));
    void reply.header('etag', etagOf(tag.aggregateVersion));
    return tag;
  }

  @Delete(':tagId')
  @ApiOperation({ summary: 'Delete a tag and its links to entities' })
  @HttpCode(204)
  @Access('tags:write', 'own-host')
  @ApiHeader(IF_MATCH_HEADER)
  @ApiNoContentResponse({ description: 'Deleted, with every association of the tag' })
  @ApiResponse(problemResponse(404, "No such tag (or another host's)"))
  @ApiResponse(PRECONDITION_FAILED)
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('tagId', IdPipe) tagId: string,
    @Headers('if-match') ifMatch: string | undefined,
  ): Promise<void> {
    await this.tags.delete(principal, tagId, parseIfMatch(ifMatch));
  }
}
