import { Module } from '@nestjs/common';
import { ChangeNotifier } from './change-notifier.js';
import { ConfigPush } from './config-push.js';
import { Connections } from './connection.js';
import { DiscoveryService } from './discovery.service.js';
import { InstancesController } from './instances.controller.js';
import { LeaseService } from './lease.service.js';
import { Liveness } from './liveness.js';
import { PendingWrites } from './pending-writes.js';
import { RegistryGateway } from './registry.gateway.js';
import { RegistryMetrics } from './registry-metrics.js';
import { RegistryService } from './registry.service.js';
import { RpcTokenGuard } from './rpc-token.guard.js';
import { SessionRefresh } from './session-refresh.js';
import { RegistryShutdown } from './shutdown.js';
import { TokenExpiry } from './token-expiry.js';
import { UpgradeAuth } from './upgrade-auth.js';

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
