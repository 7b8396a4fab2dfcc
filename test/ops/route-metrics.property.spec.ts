import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { Counter, Histogram, Registry } from 'prom-client';
import { RouteMetrics } from '../../libs/platform/route-metrics.js';
import { assertProperty } from '../support/property.js';

const COUNTER = { name: 'bindery_http_requests_total', help: 'HTTP requests' };
const HISTOGRAM = { name: 'bindery_http_request_duration_seconds', help: 'HTTP request latency' };
const BOUNDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

type Observation = [method: string, route: string, status: number, seconds: number];

/** What prom-client's own Counter and Histogram expose for the same observations. */
async function promClientText(observations: readonly Observation[]): Promise<string> {
  const registry = new Registry();
  const labelNames = ['method', 'route', 'status'] as const;
  const counter = new Counter({ ...COUNTER, labelNames, registers: [registry] });
  const histogram = new Histogram({ ...HISTOGRAM, labelNames, buckets: BOUNDS, registers: [registry] });
  for (const [method, route, status, seconds] of observations) {
    counter.inc({ method, route, status: String(status) });
    histogram.observe({ method, route, status: String(status) }, seconds);
  }
  return registry.metrics();
}

async function routeMetricsText(observations: readonly Observation[]): Promise<string> {
  const registry = new Registry();
  const metrics = new RouteMetrics(registry, COUNTER, HISTOGRAM, BOUNDS);
  for (const observation of observations) metrics.observe(...observation);
  return registry.metrics();
}

const observation: fc.Arbitrary<Observation> = fc.tuple(
  fc.constantFrom('GET', 'PUT', 'POST'),
  fc.constantFrom('/tags', '/tags/:tagId', 'unmatched', '/a "quoted"\\route'),
  fc.constantFrom(200, 204, 304, 401, 403, 404, 500),
  // Bucket bounds exactly, around them, and beyond the last.
  fc.oneof(fc.constantFrom(0, ...BOUNDS, 3), fc.double({ min: 0, max: 4, noNaN: true })),
);

describe('RouteMetrics (property, differential against prom-client)', () => {
  it('exposes exactly the text prom-client Counter and Histogram expose for the same requests', async () => {
    await assertProperty(
      'route metrics exposition',
      fc.asyncProperty(fc.array(observation, { maxLength: 40 }), async (observations) => {
        expect(await routeMetricsText(observations)).toBe(await promClientText(observations));
      }),
      200,
    );
  });

  it('starts again from nothing when the registry resets its metrics', async () => {
    const registry = new Registry();
    const metrics = new RouteMetrics(registry, COUNTER, HISTOGRAM, BOUNDS);
    metrics.observe('GET', '/tags', 200, 0.002);
    registry.resetMetrics();
    metrics.observe('GET', '/tags', 404, 0.2);
    expect(await registry.metrics()).toBe(await promClientText([['GET', '/tags', 404, 0.2]]));
  });
});
