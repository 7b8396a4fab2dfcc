import { Controller, Get, Header, Injectable } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { Public } from './access.js';
import { RouteMetrics } from './route-metrics.js';

/** Prometheus metrics of one process; a registry per app so several apps can share a test process. */
@Injectable()
export class Metrics {
  readonly registry = new Registry();

  /** `bindery_http_requests_total` and `bindery_http_request_duration_seconds`, by method, route template and status. */
  private readonly http = new RouteMetrics(
    this.registry,
    { name: 'bindery_http_requests_total', help: 'HTTP requests by method, route template and status' },
    {
      name: 'bindery_http_request_duration_seconds',
      help: 'HTTP request latency by method, route template and status',
    },
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  );

  readonly bindingRejections = new Counter({
    name: 'bindery_binding_rejections_total',
    help: 'Requests refused by the token binding rule, by reason (host, sid, env, claims) and endpoint',
    labelNames: ['reason', 'endpoint'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** A gauge whose value is read when Prometheus scrapes (e.g. instances counted in the database). */
  gauge(name: string, help: string, labelNames: readonly string[], collect: (gauge: Gauge) => Promise<void>): Gauge {
    return new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        await collect(this);
      },
    });
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    this.http.observe(method, route, status, seconds);
  }
}

@ApiTags('metrics')
@Controller('metrics')
@Public()
export class MetricsController {
  constructor(private readonly metrics: Metrics) {}

  @Get()
  @ApiOperation({ summary: 'Prometheus metrics of this process (no token needed)' })
  @ApiResponse({
    status: 200,
    description: 'Prometheus text exposition format 0.0.4',
    content: { 'text/plain': { schema: { type: 'string' } } },
  })
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
