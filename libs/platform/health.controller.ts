import { Controller, Get, HttpCode, HttpStatus } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ProblemException } from './problem.js';

const READY_TIMEOUT_MS = 2000;

/** Liveness says the process answers; readiness says the database answers too (DESIGN 9). */
@Controller('health')
export class HealthController {
  constructor(private readonly dataSource: DataSource) {}

  @Get('live')
  @HttpCode(HttpStatus.OK)
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  async ready(): Promise<{ status: 'ok'; database: 'up' }> {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.dataSource.query('select 1'),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error('timeout')), READY_TIMEOUT_MS);
        }),
      ]);
    } catch {
      throw new ProblemException(HttpStatus.SERVICE_UNAVAILABLE, 'The database is not reachable');
    } finally {
      clearTimeout(timer);
    }
    return { status: 'ok', database: 'up' };
  }
}
