import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { MAX_PAGE_SIZE, Scalar, toInt } from '#platform';

/** Longest long-poll, in seconds (DESIGN 12). */
export const MAX_WAIT_SEC = 30;

/** Query of GET /events (DESIGN 12). */
export class ListEventsQuery {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    description: "the last seq the consumer has seen (its previous answer's next); omitted: from the oldest kept event",
  })
  @IsOptional()
  @Scalar(toInt)
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  after?: number;

  @ApiPropertyOptional({ type: 'integer', default: 100, minimum: 1, maximum: MAX_PAGE_SIZE })
  @IsOptional()
  @Scalar(toInt)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit = 100;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_WAIT_SEC,
    description: 'seconds to wait for an event newer than after when there is none yet (long-poll)',
  })
  @IsOptional()
  @Scalar(toInt)
  @IsInt()
  @Min(1)
  @Max(MAX_WAIT_SEC)
  wait?: number;
}
