import { Body, Controller, HttpCode, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { problemResponse } from '#platform';
import { Access, CurrentPrincipal, type Principal } from '#token-binding';
import { MAX_BATCH_OPERATIONS, TagBatchDto, TagBatchQuery } from './dto/tag-batch.dto.js';
import { TagBatchService } from './tag-batch.service.js';
import { TagBatchView } from './tag-batch.view.js';

@ApiTags('tags')
@Controller('tags')
export class TagBatchController {
  constructor(private readonly batch: TagBatchService) {}

  @Post('batch')
  @HttpCode(200)
  @ApiOperation({
    summary: `Add or remove tags on up to ${MAX_BATCH_OPERATIONS} entities, one result per operation`,
    description:
      'Each operation follows the rules of PUT /{type}/{id}/tags (visibility, write access, known tag ids, at ' +
      'most 50 tags) and succeeds or fails on its own, operations on one entity in request order; with ' +
      'atomic=true all succeed or none is written (body up to 4 MiB).',
  })
  @Access('tags:write', 'own-host')
  @ApiOkResponse({ type: TagBatchView })
  @ApiResponse(
    problemResponse(400, `Invalid body: more than ${MAX_BATCH_OPERATIONS} operations, an unknown op or entityType`),
  )
  @ApiResponse(problemResponse(409, 'atomic=true and an operation failed: its index and reason; nothing was written'))
  apply(
    @CurrentPrincipal() principal: Principal,
    @Body() body: TagBatchDto,
    @Query() query: TagBatchQuery,
  ): Promise<TagBatchView> {
    return this.batch.apply(principal, body.operations, query.atomic);
  }
}
