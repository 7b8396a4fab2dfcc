import { Module } from '@nestjs/common';
import { EventsController } from './events.controller.js';
import { EventsService } from './events.service.js';

/** The change feed (DESIGN 12); the writes append to it through `ChangeEventRepository` in their transactions. */
@Module({
  controllers: [EventsController],
  providers: [EventsService],
})
export class EventsModule {}
