import { Body, Controller, Get, Header, Headers, HttpCode, Inject, Post, Req } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import { ApiBody, ApiConsumes, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { OAUTH_ERRORS, Public, SETTINGS, type FormFields, type Settings } from '#platform';
import { IssuerKeyRing } from '#token-binding';
import { ISSUER_KEYS, TokenIssuerService, type TokenAnswer } from './token-issuer.service.js';

export const TOKEN_PATH = '/oauth2/token';
export const JWKS_PATH = '/.well-known/jwks.json';

const OAUTH_ERROR = {
  'application/json': {
    schema: {
      type: 'object',
      required: ['error'],
      properties: { error: { type: 'string' }, error_description: { type: 'string' } },
    },
  },
};

/** `POST /oauth2/token` and the issuer's public documents (DESIGN 10); no bearer token anywhere here. */
@ApiTags('oauth2')
@Controller()
@Public()
export class TokenController {
  constructor(
    private readonly issuer: TokenIssuerService,
    @Inject(ISSUER_KEYS) private readonly keys: IssuerKeyRing,
    @Inject(SETTINGS) private readonly settings: Settings,
  ) {}

  @Post(TOKEN_PATH)
  @RouteConfig(OAUTH_ERRORS)
  @HttpCode(200)
  @Header('cache-control', 'no-store')
  @Header('pragma', 'no-cache')
  @ApiOperation({ summary: 'Client-credentials grant: a token whose host and sid come from the client record' })
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiBody({
    required: true,
    schema: {
      type: 'object',
      required: ['grant_type'],
      properties: {
        grant_type: { type: 'string', enum: ['client_credentials'] },
        scope: { type: 'string', description: "space-separated subset of the client's scopes" },
        env: { type: 'string', description: "one of the client's envs; becomes the env claim" },
        client_id: { type: 'string', description: 'client_secret_post (else HTTP Basic)' },
        client_secret: { type: 'string' },
      },
    },
  })
  @ApiOkResponse({
    description: 'RFC 6749 5.1, with Cache-Control: no-store',
    schema: {
      type: 'object',
      required: ['access_token', 'token_type', 'expires_in', 'scope'],
      properties: {
        access_token: { type: 'string' },
        token_type: { type: 'string', enum: ['Bearer'] },
        expires_in: { type: 'integer' },
        scope: { type: 'string' },
      },
    },
  })
  @ApiResponse({
    status: 400,
    description: 'invalid_request, unsupported_grant_type, invalid_scope',
    content: OAUTH_ERROR,
  })
  @ApiResponse({ status: 401, description: 'invalid_client (WWW-Authenticate: Basic)', content: OAUTH_ERROR })
  @ApiResponse({
    status: 429,
    description: 'ten failures of this client id, or thirty of any, from this address in a minute',
    content: OAUTH_ERROR,
  })
  token(
    @Body() form: FormFields,
    @Headers('authorization') authorization: string | undefined,
    @Req() request: FastifyRequest,
  ): Promise<TokenAnswer> {
    return this.issuer.issue(form, authorization, request.ip);
  }

  @Get(JWKS_PATH)
  @ApiOperation({ summary: "The issuer's public keys (all of them; the first signs)" })
  @ApiOkResponse({
    schema: { type: 'object', required: ['keys'], properties: { keys: { type: 'array', items: { type: 'object' } } } },
  })
  jwks(): object {
    return this.keys.jwks();
  }

  @Get('/.well-known/oauth-authorization-server')
  @ApiOperation({ summary: 'RFC 8414 authorization server metadata' })
  @ApiOkResponse({
    schema: {
      type: 'object',
      required: ['issuer', 'token_endpoint', 'jwks_uri', 'response_types_supported'],
      properties: {
        issuer: { type: 'string' },
        token_endpoint: { type: 'string' },
        jwks_uri: { type: 'string' },
        grant_types_supported: { type: 'array', items: { type: 'string' } },
        token_endpoint_auth_methods_supported: { type: 'array', items: { type: 'string' } },
        response_types_supported: { type: 'array', items: { type: 'string' }, maxItems: 0 },
        scopes_supported: { type: 'array', items: { type: 'string' } },
      },
    },
  })
  metadata(): object {
    // PUBLIC_BASE_URL, never Host / X-Forwarded-Host: a cached answer built from a forged header would
    // point every client at someone else's token endpoint (DESIGN 10).
    const base = this.settings.publicBaseUrl;
    return {
      issuer: this.settings.jwt.issuer,
      token_endpoint: `${base}${TOKEN_PATH}`,
      jwks_uri: `${base}${JWKS_PATH}`,
      grant_types_supported: ['client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      response_types_supported: [],
      scopes_supported: ['portal.r', 'portal.w', 'portal.admin'],
    };
  }
}
