import { Module } from '@nestjs/common';
import { RegistryChangesService } from './registry-changes.service.js';
import { RegistryController } from './registry.controller.js';
import { RegistryService } from './registry.service.js';

/** The shared registry, read-only, for operators and the console (DESIGN 13). */
@Module({
  controllers: [RegistryController],
  providers: [RegistryService, RegistryChangesService],
})
export class RegistryModule {}
