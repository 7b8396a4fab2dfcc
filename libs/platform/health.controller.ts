import { Controller, Get, HttpCode, HttpStatus } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { Public } from './access.js';
import { problemResponse } from './openapi.js';
import { databaseUnavailable } from './problem.js';
import { ReadinessDetails } from './readiness.js';

const READY_TIMEOUT_MS = 2000;

const STATUS_OK = { type: 'string', enum: ['ok'] };

/** Liveness says the process answers; readiness says the database answers too (DESIGN 9). */
@ApiTags('health')
@Controller('health')
@Public()
export class HealthController {
  constructor(
    private readonly dataSource: DataSource,
    private readonly details: ReadinessDetails,
  ) {}

  @Get('live')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({ summary: 'The process answers (no token needed)' })
  @ApiOkResponse({ schema: { type: 'object', required: ['status'], properties: { status: STATUS_OK } } })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @ApiOperation({ summary: 'The process and its database answer (no token needed)' })
  @ApiOkResponse({
    schema: {
      type: 'object',
      required: ['status', 'database'],
      properties: {
        status: STATUS_OK,
        database: { type: 'string', enum: ['up'] },
        config: {
          type: 'object',
          description: 'api only: whether new config values are sealed, and how many rows still hold plaintext',
          properties: { encryptedWrites: { type: 'boolean' }, plaintextRows: { type: 'integer' } },
        },
      },
    },
  })
  @ApiResponse(problemResponse(503, 'The database is not reachable (within 2 s)'))
  async ready(): Promise<{ status: 'ok'; database: 'up' } & Record<string, unknown>> {
    let timer: NodeJS.Timeout | undefined;
    let details: Record<string, unknown> = {};
    try {
      await Promise.race([
        this.dataSource.query('select 1').then(async () => {
          details = await this.details.read();
        }),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('timeout')), READY_TIMEOUT_MS);
        }),
      ]);
    } catch {
      throw databaseUnavailable();
    } finally {
      clearTimeout(timer);
    }
    return { status: 'ok', database: 'up', ...details };
  }
}
