import { Body, Controller, Delete, Get, Header, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import { PageQueryDto, problemResponse } from '#platform';
import { Access, CurrentPrincipal, type Principal } from '#token-binding';
import { ClientPage, ClientView, ClientWithSecretView } from './client.view.js';
import { ClientsService } from './clients.service.js';
import { CreateClientDto } from './dto/create-client.dto.js';
import { RotateSecretDto } from './dto/rotate-secret.dto.js';

const NOT_FOUND = problemResponse(404, 'No such client');

/** `/oauth2/clients`: the issuer's client records, for operators (DESIGN 10). */
@ApiTags('oauth2')
@Controller('oauth2/clients')
@Access('clients:admin', 'own-host', { hostIn: [{ body: 'host' }] })
export class ClientsController {
  constructor(private readonly clients: ClientsService) {}

  @Post()
  // Answers that carry a secret are never stored by a cache on the way (DESIGN 10).
  @Header('cache-control', 'no-store')
  @Header('pragma', 'no-cache')
  @ApiOperation({ summary: 'Register a client; its secret is in this answer only' })
  @ApiCreatedResponse({ type: ClientWithSecretView })
  @ApiResponse(problemResponse(400, 'Invalid body, or a runtime client without host and sid'))
  @ApiResponse(problemResponse(409, 'A client with that clientId already exists'))
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateClientDto): Promise<ClientWithSecretView> {
    return this.clients.create(principal, body);
  }

  @Get()
  @ApiOperation({ summary: 'List clients in clientId order, paged by offset or cursor' })
  @ApiOkResponse({ type: ClientPage })
  @ApiResponse(problemResponse(400, 'Invalid or repeated query parameter'))
  list(@CurrentPrincipal() principal: Principal, @Query() query: PageQueryDto): Promise<ClientPage> {
    return this.clients.list(principal, query);
  }

  @Get(':clientId')
  @ApiOperation({ summary: 'Read one client (never its secret)' })
  @ApiOkResponse({ type: ClientView })
  @ApiResponse(NOT_FOUND)
  get(@CurrentPrincipal() principal: Principal, @Param('clientId') clientId: string): Promise<ClientView> {
    return this.clients.get(principal, clientId);
  }

  @Delete(':clientId')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a client: no new tokens from now on' })
  @ApiNoContentResponse({ description: 'Deleted; tokens already issued live until exp' })
  @ApiResponse(NOT_FOUND)
  async delete(@CurrentPrincipal() principal: Principal, @Param('clientId') clientId: string): Promise<void> {
    await this.clients.delete(principal, clientId);
  }

  @Post(':clientId/secret')
  @HttpCode(200)
  @Header('cache-control', 'no-store')
  @Header('pragma', 'no-cache')
  @ApiOperation({ summary: 'Rotate the secret; the old one keeps working for graceSec' })
  @ApiOkResponse({ type: ClientWithSecretView })
  @ApiResponse(problemResponse(400, 'graceSec outside 0..86400'))
  @ApiResponse(NOT_FOUND)
  rotate(
    @CurrentPrincipal() principal: Principal,
    @Param('clientId') clientId: string,
    @Body() body: RotateSecretDto,
  ): Promise<ClientWithSecretView> {
    return this.clients.rotate(principal, clientId, body.graceSec);
  }
}
