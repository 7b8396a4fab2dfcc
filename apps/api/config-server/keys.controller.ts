import { Controller, Get, HttpCode, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { problemResponse } from '#platform';
import { Access } from '#token-binding';
import { KeyRotation } from './encryption/key-rotation.js';
import { KeysView, RewrapView, toKeysView } from './keys.view.js';

const GLOBAL_ONLY = problemResponse(403, "A token with a host claim: keys are the whole deployment's");

/** Key rotation for operators of the whole deployment (DESIGN 17): global admins only. */
@ApiTags('config-server admin')
@Controller('config-server/admin/keys')
export class KeysController {
  constructor(private readonly rotation: KeyRotation) {}

  @Get()
  @ApiOperation({ summary: 'Each kid of the key ring or of a stored data key, with how many data keys it wraps' })
  @Access('config:admin', 'global-admin')
  @ApiOkResponse({ type: KeysView })
  @ApiResponse(GLOBAL_ONLY)
  async list(): Promise<KeysView> {
    return toKeysView(await this.rotation.uses());
  }

  @Post('rewrap')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Re-wrap every data key under the active kid: no value changes, no new version, no push',
  })
  @Access('config:admin', 'global-admin')
  @ApiOkResponse({ type: RewrapView })
  @ApiResponse(GLOBAL_ONLY)
  rewrap(): Promise<RewrapView> {
    return this.rotation.rewrap();
  }
}
