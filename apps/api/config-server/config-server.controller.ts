import { Controller, Get, Headers, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { problemResponse } from '#platform';
import { BoundAccess } from '#token-binding';
import { JSON_TYPE, renderYaml, sendConfig, wantsYaml, YAML_TYPE } from './config-response.js';
import { ConfigServerService } from './config-server.service.js';
import { AddressQueryDto } from './dto/address-query.dto.js';
import { configRequest, type FileKind } from './layer-address.js';

/**
 * What runtimes read. Guards run first and in order: token (401), scope portal.r (403), binding of the
 * token's host/sid/env to the query (403 text/plain); only then the query is validated and SQL runs.
 */
const IF_NONE_MATCH = { name: 'If-None-Match', required: false, description: 'An ETag of an earlier answer: 304' };
const ETAG = { ETag: { description: 'strong ETag of this exact body', schema: { type: 'string' } } };
const NOT_MODIFIED = { status: 304, description: 'If-None-Match matched the current ETag', headers: ETAG };
const BAD_QUERY = problemResponse(
  400,
  'Repeated, unknown or malformed parameter; no serviceId and no productId+productVersion',
);
const FILES_OK = {
  status: 200,
  description: 'File name to standard base64 content, the higher layer winning per name; {} when none',
  headers: ETAG,
  content: {
    'application/json': {
      schema: { type: 'object', additionalProperties: { type: 'string', format: 'byte' } },
    },
  },
};

@ApiTags('config-server')
@Controller('config-server')
export class ConfigServerController {
  constructor(private readonly config: ConfigServerService) {}

  @Get('configs')
  @ApiOperation({ summary: 'The merged properties a runtime sees (token-bound)' })
  @BoundAccess('config:read')
  @ApiHeader(IF_NONE_MATCH)
  @ApiHeader({ name: 'Accept', required: false, description: 'application/yaml for a values.yml' })
  @ApiResponse({
    status: 200,
    description: 'configName.propertyName to typed value, sorted, the higher layer winning per key',
    headers: ETAG,
    content: {
      'application/json': { schema: { type: 'object', additionalProperties: true } },
      'application/yaml': { schema: { type: 'string' } },
    },
  })
  @ApiResponse(NOT_MODIFIED)
  @ApiResponse(BAD_QUERY)
  async configs(
    @Query() query: AddressQueryDto,
    @Headers('accept') accept: string | undefined,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const properties = await this.config.properties(configRequest(query));
    const yaml = wantsYaml(accept);
    const body = yaml ? renderYaml(properties) : JSON.stringify(properties);
    sendConfig(reply, body, yaml ? YAML_TYPE : JSON_TYPE, ifNoneMatch);
  }

  @Get('certs')
  @ApiOperation({ summary: 'The merged certificates a runtime sees, base64 (token-bound)' })
  @BoundAccess('config:read')
  @ApiHeader(IF_NONE_MATCH)
  @ApiResponse(FILES_OK)
  @ApiResponse(NOT_MODIFIED)
  @ApiResponse(BAD_QUERY)
  certs(
    @Query() query: AddressQueryDto,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    return this.sendFiles(query, 'cert', ifNoneMatch, reply);
  }

  @Get('files')
  @ApiOperation({ summary: 'The merged files a runtime sees, base64 (token-bound)' })
  @BoundAccess('config:read')
  @ApiHeader(IF_NONE_MATCH)
  @ApiResponse(FILES_OK)
  @ApiResponse(NOT_MODIFIED)
  @ApiResponse(BAD_QUERY)
  files(
    @Query() query: AddressQueryDto,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    return this.sendFiles(query, 'file', ifNoneMatch, reply);
  }

  private async sendFiles(
    query: AddressQueryDto,
    kind: FileKind,
    ifNoneMatch: string | undefined,
    reply: FastifyReply,
  ): Promise<void> {
    const files = await this.config.files(configRequest(query), kind);
    sendConfig(reply, JSON.stringify(files), JSON_TYPE, ifNoneMatch);
  }
}
