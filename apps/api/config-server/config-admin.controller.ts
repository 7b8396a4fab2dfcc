import { Body, Controller, Delete, Get, HttpCode, Put, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { problemResponse } from '#platform';
import { Authenticated, CurrentPrincipal, SCOPE_ADMIN, type Principal } from '#token-binding';
import { ConfigAdminService } from './config-admin.service.js';
import { FilesLayerView, PropertiesLayerView } from './config-layer.view.js';
import { checkProperties, decodeFiles } from './config-values.js';
import { AddressQueryDto, FilesLayerQueryDto } from './dto/address-query.dto.js';
import { FilesBodyDto } from './dto/files-body.dto.js';
import { PropertiesBodyDto } from './dto/properties-body.dto.js';
import { layerAddress } from './layer-address.js';

const BAD_ADDRESS = problemResponse(
  400,
  'Bad address: host missing, both or neither of serviceId and productId+productVersion, repeated or unknown parameter',
);
const BAD_PROPERTIES = problemResponse(
  400,
  'Bad address, or a key that is not configName.propertyName, or a null value',
);
const BAD_FILES = problemResponse(400, 'Bad address or kind, a bad file name, or content that is not standard base64');

/** Operators manage one layer at a time (DESIGN 7); every route needs portal.admin. */
@ApiTags('config-server admin')
@Controller('config-server/admin')
export class ConfigAdminController {
  constructor(private readonly admin: ConfigAdminService) {}

  @Put('properties')
  @ApiOperation({ summary: 'Replace the properties of one layer' })
  @Authenticated(SCOPE_ADMIN)
  @ApiOkResponse({ type: PropertiesLayerView, description: 'The layer after the atomic replace' })
  @ApiResponse(BAD_PROPERTIES)
  putProperties(
    @CurrentPrincipal() principal: Principal,
    @Query() query: AddressQueryDto,
    @Body() body: PropertiesBodyDto,
  ): Promise<PropertiesLayerView> {
    const address = layerAddress(query);
    return this.admin.putProperties(principal, address, checkProperties(body.properties));
  }

  @Get('properties')
  @ApiOperation({ summary: 'Read the properties of one layer' })
  @Authenticated(SCOPE_ADMIN)
  @ApiOkResponse({ type: PropertiesLayerView, description: 'properties is {} for an empty layer' })
  @ApiResponse(BAD_ADDRESS)
  getProperties(@Query() query: AddressQueryDto): Promise<PropertiesLayerView> {
    return this.admin.getProperties(layerAddress(query));
  }

  @Delete('properties')
  @ApiOperation({ summary: 'Delete the properties of one layer' })
  @HttpCode(204)
  @Authenticated(SCOPE_ADMIN)
  @ApiNoContentResponse({ description: "The layer's properties are gone (also when there were none)" })
  @ApiResponse(BAD_ADDRESS)
  async deleteProperties(@Query() query: AddressQueryDto): Promise<void> {
    await this.admin.deleteProperties(layerAddress(query));
  }

  @Put('files')
  @ApiOperation({ summary: 'Replace the files of one kind of one layer' })
  @Authenticated(SCOPE_ADMIN)
  @ApiOkResponse({ type: FilesLayerView, description: "The layer's files of that kind after the atomic replace" })
  @ApiResponse(BAD_FILES)
  putFiles(
    @CurrentPrincipal() principal: Principal,
    @Query() query: FilesLayerQueryDto,
    @Body() body: FilesBodyDto,
  ): Promise<FilesLayerView> {
    const address = layerAddress(query);
    return this.admin.putFiles(principal, address, query.kind, decodeFiles(body.files));
  }

  @Get('files')
  @ApiOperation({ summary: 'Read the files of one kind of one layer' })
  @Authenticated(SCOPE_ADMIN)
  @ApiOkResponse({ type: FilesLayerView, description: 'files is {} when there are none' })
  @ApiResponse(BAD_FILES)
  getFiles(@Query() query: FilesLayerQueryDto): Promise<FilesLayerView> {
    return this.admin.getFiles(layerAddress(query), query.kind);
  }

  @Delete('files')
  @ApiOperation({ summary: 'Delete the files of one kind of one layer' })
  @HttpCode(204)
  @Authenticated(SCOPE_ADMIN)
  @ApiNoContentResponse({ description: "The layer's files of that kind are gone (also when there were none)" })
  @ApiResponse(BAD_FILES)
  async deleteFiles(@Query() query: FilesLayerQueryDto): Promise<void> {
    await this.admin.deleteFiles(layerAddress(query), query.kind);
  }
}
