import { Module } from '@nestjs/common';
import { ConsoleAssets } from './console-assets.js';
import { ConsoleController } from './console.controller.js';

/** The operator console at `/console` (DESIGN 13): static files only; its data comes from the api's own routes. */
@Module({
  controllers: [ConsoleController],
  providers: [{ provide: ConsoleAssets, useFactory: () => new ConsoleAssets() }],
})
export class ConsoleModule {}
