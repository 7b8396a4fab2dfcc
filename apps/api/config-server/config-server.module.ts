import { Module } from '@nestjs/common';
import { ConfigAdminController } from './config-admin.controller.js';
import { ConfigAdminService } from './config-admin.service.js';
import { ConfigHistoryController } from './config-history.controller.js';
import { ConfigHistoryService } from './config-history.service.js';
import { ConfigServerController } from './config-server.controller.js';
import { ConfigServerService } from './config-server.service.js';

/** The config server (DESIGN 7): runtimes read merged layers behind the binding rule; admins write layers. */
@Module({
  controllers: [ConfigServerController, ConfigAdminController, ConfigHistoryController],
  // The start-up warning of DESIGN 6.4 lives with the only api feature the switch affects.
  providers: [ConfigServerService, ConfigAdminService, ConfigHistoryService],
})
export class ConfigServerModule {}
