import { Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { badRequest, problemResponse, ProblemException } from '#platform';
import { Access, CurrentPrincipal, type Principal } from '#token-binding';
import { ETAG_HEADER, PRECONDITION_FAILED } from '../common/api-docs.js';
import { etagOf, parseIfMatch } from '../common/etag.js';
import { CHANGE_REASON_HEADER, NotStored, OTHER_HOST } from './config-api-docs.js';
import { ConfigHistoryService } from './config-history.service.js';
import { LayerHistoryPage, LayerVersionContentView, RolledBackLayerView } from './config-history.view.js';
import { HistoryQueryDto, MAX_VERSION, RollbackQueryDto, toVersion, VersionQueryDto } from './dto/history-query.dto.js';
import { authorOf, ownLayer } from './layer-access.js';
import { layerAddress } from './layer-address.js';

const BAD_ADDRESS = problemResponse(400, 'Bad address, or a repeated or unknown parameter');
const UNKNOWN_VERSION = problemResponse(404, 'No such version of this layer (never existed, or pruned)');

/** A version number from the path, spelt as the rollback's query parameter must be. */
function versionNumber(raw: string): number {
  const version = toVersion(raw);
  if (Number.isNaN(version)) {
    const message = `version must be a positive integer up to ${MAX_VERSION}`;
    throw badRequest(message, [{ field: 'version', message }]);
  }
  return version;
}

/** A layer's history, one version's content, and rollback (DESIGN 14); every route needs portal.admin. */
@ApiTags('config-server admin')
@Controller('config-server/admin')
export class ConfigHistoryController {
  constructor(private readonly history: ConfigHistoryService) {}

  @Get('history')
  @ApiOperation({ summary: "A layer's versions, newest first: who, when, why and which names changed (no values)" })
  @Access('config:admin', 'own-host', { hostIn: [{ query: 'host' }] })
  @ApiOkResponse({ type: LayerHistoryPage })
  @ApiResponse(BAD_ADDRESS)
  @ApiResponse(OTHER_HOST)
  list(@CurrentPrincipal() principal: Principal, @Query() query: HistoryQueryDto): Promise<LayerHistoryPage> {
    return this.history.list(ownLayer(principal, layerAddress(query)), query);
  }

  @Get('history/:version')
  @NotStored()
  @ApiOperation({ summary: "One version's content: properties and file hashes (file contents with include=files)" })
  @Access('config:admin', 'own-host', { hostIn: [{ query: 'host' }] })
  @ApiParam({ name: 'version', schema: { type: 'integer', minimum: 1 } })
  @ApiOkResponse({ type: LayerVersionContentView })
  @ApiResponse(BAD_ADDRESS)
  @ApiResponse(OTHER_HOST)
  @ApiResponse(UNKNOWN_VERSION)
  version(
    @CurrentPrincipal() principal: Principal,
    @Param('version') version: string,
    @Query() query: VersionQueryDto,
  ): Promise<LayerVersionContentView> {
    const n = versionNumber(version);
    return this.history.version(ownLayer(principal, layerAddress(query)), n, query.include === 'files');
  }

  @Post('rollback')
  @NotStored()
  @HttpCode(200)
  @ApiOperation({
    summary: "Make an earlier version's content current, as a new version (nothing is rewritten)",
    description:
      'If-Match with the current version is required (428 without it or with *): a rollback is decided on ' +
      'what the operator saw, so it never silently undoes a change made meanwhile.',
  })
  @Access('config:admin', 'own-host', { hostIn: [{ query: 'host' }] })
  @ApiHeader({ name: 'If-Match', required: true, description: 'the current version, e.g. W/"7"' })
  @ApiHeader(CHANGE_REASON_HEADER)
  @ApiOkResponse({ type: RolledBackLayerView, headers: ETAG_HEADER, description: "the layer's new version" })
  @ApiResponse(BAD_ADDRESS)
  @ApiResponse(OTHER_HOST)
  @ApiResponse(UNKNOWN_VERSION)
  @ApiResponse(PRECONDITION_FAILED)
  @ApiResponse(problemResponse(428, 'If-Match is missing or "*"'))
  async rollback(
    @CurrentPrincipal() principal: Principal,
    @Query() query: RollbackQueryDto,
    @Headers('if-match') ifMatch: string | undefined,
    @Headers('x-change-reason') reason: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<RolledBackLayerView> {
    const address = ownLayer(principal, layerAddress(query));
    const author = authorOf(principal, reason);
    const condition = parseIfMatch(ifMatch);
    // `*` would roll back whatever is current now, not the version the operator saw (DESIGN 14).
    if (condition === undefined || 'any' in condition) {
      throw new ProblemException(
        428,
        'A rollback needs If-Match with the current version (W/"<n>"), not "*"; read it first',
      );
    }
    const { view, version } = await this.history.rollback(author, address, query.version, condition);
    void reply.header('etag', etagOf(version));
    return view;
  }
}
