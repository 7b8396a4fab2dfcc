import { Module } from '@nestjs/common';
import { ChangeNotifier } from './discovery/change-notifier.js';
import { ConfigPush } from './push/config-push.js';
import { Connections } from './sessions/connection.js';
import { DiscoveryService } from './discovery/discovery.service.js';
import { InstancesController } from './instances.controller.js';
import { LeaseService } from './sessions/lease.service.js';
import { Liveness } from './sessions/liveness.js';
import { PendingWrites } from './sessions/pending-writes.js';
import { RegistryGateway } from './registry.gateway.js';
import { RegistryMetrics } from './registry-metrics.js';
import { RegistryService } from './registry.service.js';
import { RpcTokenGuard } from './sessions/rpc-token.guard.js';
import { SessionRefresh } from './sessions/session-refresh.js';
import { RegistryShutdown } from './sessions/shutdown.js';
import { TokenExpiry } from './sessions/token-expiry.js';
import { UpgradeAuth } from './sessions/upgrade-auth.js';

/** Runtime registration over WebSocket, discovery, config push and the operators' instance list. */
@Module({
  controllers: [InstancesController],
  providers: [
    LeaseService,
    RegistryService,
    DiscoveryService,
    RegistryGateway,
    Connections,
    RpcTokenGuard,
    PendingWrites,
    UpgradeAuth,
    Liveness,
    TokenExpiry,
    SessionRefresh,
    ChangeNotifier,
    ConfigPush,
    RegistryMetrics,
    RegistryShutdown,
  ],
  exports: [RegistryService, RegistryGateway],
})
export class RegistryModule {}
