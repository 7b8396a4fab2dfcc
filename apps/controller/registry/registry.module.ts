import { Module } from '@nestjs/common';
import { Connections } from './connection.js';
import { DiscoveryService } from './discovery.service.js';
import { InstancesController } from './instances.controller.js';
import { LeaseService } from './lease.service.js';
import { RegistryGateway } from './registry.gateway.js';
import { RegistryService } from './registry.service.js';
import { RpcTokenGuard } from './rpc-token.guard.js';
import { SessionRefresh } from './session-refresh.js';
import { TokenExpiry } from './token-expiry.js';

/** Runtime registration over WebSocket, discovery and the operators' instance list. */
@Module({
  controllers: [InstancesController],
  providers: [
    LeaseService,
    RegistryService,
    DiscoveryService,
    RegistryGateway,
    Connections,
    RpcTokenGuard,
    TokenExpiry,
    SessionRefresh,
  ],
  exports: [RegistryService, RegistryGateway],
})
export class RegistryModule {}
