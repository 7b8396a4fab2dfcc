import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Connections } from './connection.js';
import { InstancesController } from './instances.controller.js';
import { RegistryGateway } from './registry.gateway.js';
import { RegistryService } from './registry.service.js';
import { RuntimeInstance } from './runtime-instance.entity.js';
import { RpcTokenGuard } from './rpc-token.guard.js';

/** Runtime registration over WebSocket, discovery and the operators' instance list. */
@Module({
  imports: [TypeOrmModule.forFeature([RuntimeInstance])],
  controllers: [InstancesController],
  providers: [RegistryService, RegistryGateway, Connections, RpcTokenGuard],
  exports: [RegistryService, RegistryGateway],
})
export class RegistryModule {}
