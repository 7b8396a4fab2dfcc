import { Injectable } from '@nestjs/common';
import type { Gauge } from 'prom-client';
import { Metrics } from '#platform';
import { Connections } from './sessions/connection.js';
import { DiscoveryService } from './discovery/discovery.service.js';

/** The controller's gauges on `/metrics`: sockets, the instances they hold, and discovery subscriptions. */
@Injectable()
export class RegistryMetrics {
  constructor(
    private readonly connections: Connections,
    private readonly discovery: DiscoveryService,
    metrics: Metrics,
  ) {
    // Read at scrape time, so the gauges never drift from the state they describe.
    const current = (read: () => number) => (gauge: Gauge) => {
      gauge.set(read());
      return Promise.resolve();
    };
    metrics.gauge(
      'bindery_registered_instances',
      'Connected runtime instances held by this controller process',
      [],
      current(() => this.heldInstances()),
    );
    metrics.gauge(
      'bindery_ws_connections',
      'Open registry WebSocket connections of this controller process',
      [],
      current(() => this.openConnections()),
    );
    metrics.gauge(
      'bindery_discovery_subscriptions',
      'discovery/subscribe subscriptions of this controller process',
      [],
      current(() => this.subscriptions()),
    );
  }

  openConnections(): number {
    return this.connections.size;
  }

  /** `discovery/subscribe` subscriptions held by the open connections of this process. */
  subscriptions(): number {
    return this.discovery.size;
  }

  /** Instances registered on the open connections of this process. */
  heldInstances(): number {
    let held = 0;
    for (const connection of this.connections.values()) held += connection.instances.size;
    return held;
  }
}
