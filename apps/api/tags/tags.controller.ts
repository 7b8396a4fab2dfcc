import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Put, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Authenticated, CurrentPrincipal, SCOPE_READ, SCOPE_WRITE, type Principal } from '#token-binding';
import { etagOf, parseIfMatch } from '../common/etag.js';
import { IdPipe } from '../common/id.pipe.js';
import { ListTagsQuery } from './dto/list-tags.query.js';
import { TagBodyDto } from './dto/tag-body.dto.js';
import { TagsService } from './tags.service.js';
import type { TagPage, TagView } from './tag.view.js';

@Controller('tags')
export class TagsController {
  constructor(private readonly tags: TagsService) {}

  @Post()
  @Authenticated(SCOPE_WRITE)
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
  @Authenticated(SCOPE_READ)
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListTagsQuery): Promise<TagPage> {
    return this.tags.list(principal, query);
  }

  @Get(':tagId')
  @Authenticated(SCOPE_READ)
  async get(
    @CurrentPrincipal() principal: Principal,
    @Param('tagId', IdPipe) tagId: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<TagView> {
    const tag = await this.tags.get(principal, tagId);
    void reply.header('etag', etagOf(tag.aggregateVersion));
    return tag;
  }

  @Put(':tagId')
  @Authenticated(SCOPE_WRITE)
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
  @HttpCode(204)
  @Authenticated(SCOPE_WRITE)
  async delete(
    @CurrentPrincipal() principal: Principal,
    @Param('tagId', IdPipe) tagId: string,
    @Headers('if-match') ifMatch: string | undefined,
  ): Promise<void> {
    await this.tags.delete(principal, tagId, parseIfMatch(ifMatch));
  }
}
