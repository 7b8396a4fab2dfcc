import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Global, Module } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import pg from 'pg';
import { DataSource } from 'typeorm';
import { ControlSession } from '#database';
import { createHttpApp, PlatformModule, Public } from '#platform';
import { LogCapture, testSettings } from '../support/api.js';

/**
 * Logs an operator can alert on (issue 40): readiness while the database is away is one warning line, not an
 * error with a stack; the control session's lines carry no request id, though a request opened it.
 */

const sessionUrl = (): string => process.env.DATABASE_SESSION_URL || process.env.DATABASE_URL || '';
const applicationName = `bindery-lines-test-${randomUUID().slice(0, 8)}`;
const session = new ControlSession(sessionUrl(), applicationName);
const admin = new pg.Client({ connectionString: sessionUrl() });

/** The control session, first used by a request (as the registry stream's first reader does), lost and back. */
@Controller('t')
@Public()
class SessionController {
  @Get('reconnect')
  async reconnect(): Promise<{ ok: true }> {
    await session.listen('bindery_lines_test', () => undefined);
    const back = new Promise<void>((resolve) => session.onReconnect(resolve));
    await admin.query('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1', [
      applicationName,
    ]);
    await back;
    return { ok: true };
  }
}

/** The database as readiness sees it while PostgreSQL is away. */
const unreachable = {
  query: () =>
    Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })),
};

@Global()
@Module({ providers: [{ provide: DataSource, useValue: unreachable }], exports: [DataSource] })
class UnreachableDatabase {}

let app: NestFastifyApplication;
const logs = new LogCapture();

beforeAll(async () => {
  await admin.connect();
  @Module({
    imports: [PlatformModule.forRoot({ settings: testSettings(), logStream: logs }), UnreachableDatabase],
    controllers: [SessionController],
  })
  class LinesModule {}
  app = await createHttpApp({ module: LinesModule });
  await app.init();
  await app.getHttpAdapter().getInstance().ready();
});

afterAll(async () => {
  await session.close();
  await admin.end();
  await app.close();
});

const linesOf = (id: string) => logs.lines.filter((l) => (l.req as { id?: unknown } | undefined)?.id === id);

describe('readiness while the database is away', () => {
  it('is one warning line for the request, without a stack', async () => {
    const res = await app.inject({ method: 'GET', url: '/health/ready', headers: { 'x-request-id': 'ready-down-1' } });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('2');
    expect(linesOf('ready-down-1')).toEqual([
      expect.objectContaining({ level: 40, msg: 'request unavailable', res: { statusCode: 503 } }),
    ]);
    expect(logs.lines.filter((l) => l.msg === 'unhandled error' || Number(l.level) >= 50)).toEqual([]);
  });
});

describe('the control session opened by a request', () => {
  it('logs its loss and its reconnection without that request id, while the request is still in flight', async () => {
    const res = await app.inject({ method: 'GET', url: '/t/reconnect', headers: { 'x-request-id': 'opens-1' } });
    expect(res.statusCode).toBe(200);
    const sessionLines = logs.lines.filter((l) => l.context === 'ControlSession');
    expect(sessionLines.map((l) => l.msg)).toEqual([
      'control session lost; reconnecting',
      'control session reconnected',
    ]);
    for (const line of sessionLines) expect(line).not.toHaveProperty('req');
  });
});
