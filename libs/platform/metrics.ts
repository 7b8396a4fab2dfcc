import { Controller, Get, Header, Injectable } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { Public } from './access.js';

/** Prometheus metrics of one process; a registry per app so several apps can share a test process. */
@Injectable()
export class Metrics {
  readonly registry = new Registry();

  private readonly requests = new Counter({
    name: 'bindery_http_requests_total',
    help: 'HTTP requests by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  private readonly latency = new Histogram({
    name: 'bindery_http_request_duration_seconds',
    help: 'HTTP request latency by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [this.registry],
  });

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

  /** One answered request, by method, route template and status. */
  observe(method: string, route: string, status: number, seconds: number): void {
    const labels = { method, route, status: String(status) };
    this.requests.inc(labels);
    this.latency.observe(labels, seconds);
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
