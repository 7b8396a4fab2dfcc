import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { problemResponse } from '#platform';
import { Access, CurrentPrincipal, type Principal } from '#token-binding';
import { ListEventsQuery } from './dto/list-events.query.js';
import { EventPage } from './event.view.js';
import { EventsService } from './events.service.js';

@ApiTags('events')
@Controller('events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @ApiOperation({
    summary: 'Changes to tags, entities, their links and config layers, in commit order (long-poll with wait)',
    description:
      "Resume from the previous answer's next: nothing is missed and nothing seen twice. Events of resources " +
      'the caller cannot see are left out, but next still moves past them.',
  })
  @Access('tags:read', 'own-host')
  @ApiOkResponse({ type: EventPage })
  @ApiResponse(problemResponse(400, 'Invalid or repeated query parameter'))
  @ApiResponse(problemResponse(410, 'after is older than the oldest kept event: events may have been missed'))
  list(@CurrentPrincipal() principal: Principal, @Query() query: ListEventsQuery): Promise<EventPage> {
    return this.events.list(principal, query);
  }
}
