import type { Metric, Registry } from 'prom-client';

type RouteLabels = { method: string; route: string; status: string };

/** One exposed sample, as prom-client's registry formats it: `metricName{labels} value`. */
interface Sample {
  readonly labels: Readonly<Record<string, string | number>>;
  readonly value: number;
  readonly metricName?: string;
}

/** One method, route template and status: its request count, latency sum and latency buckets. */
interface RouteSeries {
  readonly labels: RouteLabels;
  readonly buckets: number[];
  sum: number;
  count: number;
}

/** What a prom-client `Registry` reads from a metric it exposes. */
interface ExposedMetric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  readonly aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: string; aggregator: 'sum'; values: Sample[] }>;
  reset(): void;
}

/**
 * HTTP requests counted (`<name>_total`-style counter) and timed (histogram) by method, route template and
 * status, exposed through prom-client's registry in its own text format. Recording is one Map lookup by a
 * string key: prom-client's `inc`/`observe` validate and hash the label object on every call, even through
 * `labels()` children (about 1.5 µs a request on the auth route, bench auth).
 */
export class RouteMetrics {
  private readonly series = new Map<string, RouteSeries>();

  constructor(
    registry: Registry,
    counter: { readonly name: string; readonly help: string },
    histogram: { readonly name: string; readonly help: string },
    private readonly bounds: readonly number[],
  ) {
    // The registry reads only name, help, type, aggregator, get() and reset(); its type names its own classes.
    const register = (metric: ExposedMetric): void => registry.registerMetric(metric as unknown as Metric);
    register(this.exposed(counter.name, counter.help, 'counter', (s) => [{ labels: s.labels, value: s.count }]));
    register(this.exposed(histogram.name, histogram.help, 'histogram', (s) => this.histogramValues(histogram.name, s)));
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let series = this.series.get(key);
    if (series === undefined) {
      series = {
        labels: { method, route, status: String(status) },
        buckets: this.bounds.map(() => 0),
        sum: 0,
        count: 0,
      };
      this.series.set(key, series);
    }
    series.count += 1;
    series.sum += seconds;
    // Per bucket, not cumulative: the exposition adds them up (as prom-client stores them).
    for (let i = 0; i < this.bounds.length; i += 1) {
      if (seconds <= (this.bounds[i] ?? 0)) {
        series.buckets[i] = (series.buckets[i] ?? 0) + 1;
        break;
      }
    }
  }

  /** The series as prom-client's Histogram exposes them: cumulative `le` buckets, `+Inf`, sum, count. */
  private histogramValues(name: string, series: RouteSeries): Sample[] {
    let cumulative = 0;
    const values: Sample[] = this.bounds.map((bound, i) => {
      cumulative += series.buckets[i] ?? 0;
      return { labels: { le: bound, ...series.labels }, value: cumulative, metricName: `${name}_bucket` };
    });
    values.push(
      { labels: { le: '+Inf', ...series.labels }, value: series.count, metricName: `${name}_bucket` },
      { labels: series.labels, value: series.sum, metricName: `${name}_sum` },
      { labels: series.labels, value: series.count, metricName: `${name}_count` },
    );
    return values;
  }

  private exposed(
    name: string,
    help: string,
    type: 'counter' | 'histogram',
    values: (series: RouteSeries) => Sample[],
  ): ExposedMetric {
    const all = this.series;
    return {
      name,
      help,
      type,
      aggregator: 'sum',
      get: () => Promise.resolve({ name, help, type, aggregator: 'sum', values: [...all.values()].flatMap(values) }),
      reset: () => all.clear(),
    };
  }
}
