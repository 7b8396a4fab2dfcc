import { Body, Controller, Delete, Get, Headers, HttpCode, Put, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { problemResponse } from '#platform';
import { Access, CurrentPrincipal, type Principal } from '#token-binding';
import { ETAG_HEADER, IF_MATCH_HEADER, PRECONDITION_FAILED } from '../common/api-docs.js';
import { etagOf, parseIfMatch } from '../common/etag.js';
import { ConfigAdminService, type Versioned } from './config-admin.service.js';
import { FilesLayerView, LayerPage, PropertiesLayerView } from './config-layer.view.js';
import { checkProperties, decodeFiles } from './config-values.js';
import { AddressQueryDto, FilesLayerQueryDto } from './dto/address-query.dto.js';
import { FilesBodyDto } from './dto/files-body.dto.js';
import { LayersQueryDto } from './dto/layers-query.dto.js';
import { PropertiesBodyDto } from './dto/properties-body.dto.js';
import { layerAddress } from './layer-address.js';
import { authorOf, listedHost, ownLayer } from './layer-access.js';
import { CHANGE_REASON_HEADER, NotStored, OTHER_HOST } from './config-api-docs.js';

const BAD_ADDRESS = problemResponse(
  400,
  'Bad address: host missing, both or neither of serviceId and productId+productVersion, repeated or unknown parameter',
);
const BAD_PROPERTIES = problemResponse(
  400,
  'Bad address, or a key that is not configName.propertyName, or a null value',
);
const BAD_FILES = problemResponse(400, 'Bad address or kind, a bad file name, or content that is not standard base64');

/** Sends the layer's version as its ETag and answers the layer part. */
function withEtag<T>(reply: FastifyReply, { view, version }: Versioned<T>): T {
  void reply.header('etag', etagOf(version));
  return view;
}

/** Operators manage one layer at a time (DESIGN 7); every route needs portal.admin. */
@ApiTags('config-server admin')
@Controller('config-server/admin')
export class ConfigAdminController {
  constructor(private readonly admin: ConfigAdminService) {}

  @Get('layers')
  @ApiOperation({ summary: 'The addresses that have a layer, with their versions and sizes (for pickers)' })
  @Access('config:admin', 'own-host', { hostIn: [{ query: 'host' }] })
  @ApiOkResponse({ type: LayerPage })
  @ApiResponse(problemResponse(400, 'Invalid or repeated query parameter'))
  @ApiResponse(OTHER_HOST)
  layers(@CurrentPrincipal() principal: Principal, @Query() query: LayersQueryDto): Promise<LayerPage> {
    return this.admin.list(listedHost(principal, query.host), query);
  }

  @Put('properties')
  @NotStored()
  @ApiOperation({ summary: 'Replace the properties of one layer' })
  @Access('config:admin', 'own-host', { hostIn: [{ query: 'host' }] })
  @ApiHeader(IF_MATCH_HEADER)
  @ApiHeader(CHANGE_REASON_HEADER)
  @ApiOkResponse({ type: PropertiesLayerView, headers: ETAG_HEADER, description: 'The layer after the atomic replace' })
  @ApiResponse(BAD_PROPERTIES)
  @ApiResponse(PRECONDITION_FAILED)
  @ApiResponse(OTHER_HOST)
  async putProperties(
    @CurrentPrincipal() principal: Principal,
    @Query() query: AddressQueryDto,
    @Body() body: PropertiesBodyDto,
    @Headers('if-match') ifMatch: string | undefined,
    @Headers('x-change-reason') reason: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PropertiesLayerView> {
    const address = ownLayer(principal, layerAddress(query));
    const properties = checkProperties(body.properties);
    const author = authorOf(principal, reason);
    return withEtag(reply, await this.admin.putProperties(author, address, properties, parseIfMatch(ifMatch)));
  }

  @Get('properties')
  @NotStored()
  @ApiOperation({ summary: 'Read the properties of one layer' })
  @Access('config:admin', 'own-host', { hostIn: [{ query: 'host' }] })
  @ApiOkResponse({
    type: PropertiesLayerView,
    headers: ETAG_HEADER,
    description: 'properties is {} for an empty layer',
  })
  @ApiResponse(BAD_ADDRESS)
  @ApiResponse(OTHER_HOST)
  async getProperties(
    @CurrentPrincipal() principal: Principal,
    @Query() query: AddressQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<PropertiesLayerView> {
    return withEtag(reply, await this.admin.getProperties(ownLayer(principal, layerAddress(query))));
  }

  @Delete('properties')
  @ApiOperation({ summary: 'Delete the properties of one layer' })
  @HttpCode(204)
  @Access('config:admin', 'own-host', { hostIn: [{ query: 'host' }] })
  @ApiHeader(IF_MATCH_HEADER)
  @ApiHeader(CHANGE_REASON_HEADER)
  @ApiNoContentResponse({ description: "The layer's properties are gone (also when there were none)" })
  @ApiResponse(BAD_ADDRESS)
  @ApiResponse(PRECONDITION_FAILED)
  @ApiResponse(OTHER_HOST)
  async deleteProperties(
    @CurrentPrincipal() principal: Principal,
    @Query() query: AddressQueryDto,
    @Headers('if-match') ifMatch: string | undefined,
    @Headers('x-change-reason') reason: string | undefined,
  ): Promise<void> {
    const address = ownLayer(principal, layerAddress(query));
    await this.admin.deleteProperties(authorOf(principal, reason), address, parseIfMatch(ifMatch));
  }

  @Put('files')
  @NotStored()
  @ApiOperation({ summary: 'Replace the files of one kind of one layer' })
  @Access('config:admin', 'own-host', { hostIn: [{ query: 'host' }] })
  @ApiHeader(IF_MATCH_HEADER)
  @ApiHeader(CHANGE_REASON_HEADER)
  @ApiOkResponse({
    type: FilesLayerView,
    headers: ETAG_HEADER,
    description: "The layer's files of that kind after the atomic replace",
  })
  @ApiResponse(BAD_FILES)
  @ApiResponse(PRECONDITION_FAILED)
  @ApiResponse(OTHER_HOST)
  async putFiles(
    @CurrentPrincipal() principal: Principal,
    @Query() query: FilesLayerQueryDto,
    @Body() body: FilesBodyDto,
    @Headers('if-match') ifMatch: string | undefined,
    @Headers('x-change-reason') reason: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<FilesLayerView> {
    const address = ownLayer(principal, layerAddress(query));
    const files = decodeFiles(body.files);
    const author = authorOf(principal, reason);
    return withEtag(reply, await this.admin.putFiles(author, address, query.kind, files, parseIfMatch(ifMatch)));
  }

  @Get('files')
  @NotStored()
  @ApiOperation({ summary: 'Read the files of one kind of one layer' })
  @Access('config:admin', 'own-host', { hostIn: [{ query: 'host' }] })
  @ApiOkResponse({ type: FilesLayerView, headers: ETAG_HEADER, description: 'files is {} when there are none' })
  @ApiResponse(BAD_FILES)
  @ApiResponse(OTHER_HOST)
  async getFiles(
    @CurrentPrincipal() principal: Principal,
    @Query() query: FilesLayerQueryDto,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<FilesLayerView> {
    return withEtag(reply, await this.admin.getFiles(ownLayer(principal, layerAddress(query)), query.kind));
  }

  @Delete('files')
  @ApiOperation({ summary: 'Delete the files of one kind of one layer' })
  @HttpCode(204)
  @Access('config:admin', 'own-host', { hostIn: [{ query: 'host' }] })
  @ApiHeader(IF_MATCH_HEADER)
  @ApiHeader(CHANGE_REASON_HEADER)
  @ApiNoContentResponse({ description: "The layer's files of that kind are gone (also when there were none)" })
  @ApiResponse(BAD_FILES)
  @ApiResponse(PRECONDITION_FAILED)
  @ApiResponse(OTHER_HOST)
  async deleteFiles(
    @CurrentPrincipal() principal: Principal,
    @Query() query: FilesLayerQueryDto,
    @Headers('if-match') ifMatch: string | undefined,
    @Headers('x-change-reason') reason: string | undefined,
  ): Promise<void> {
    const address = ownLayer(principal, layerAddress(query));
    await this.admin.deleteFiles(authorOf(principal, reason), address, query.kind, parseIfMatch(ifMatch));
  }
}
