import { ApiProperty } from '@nestjs/swagger';
import { CHANGE_EVENT_TYPES, type ChangeEventType, type StoredChangeEvent } from '#database';
import { isoTime } from '#platform';

/** One change in the feed (DESIGN 12); a class only so the OpenAPI document can describe it. */
export class EventView {
  @ApiProperty({ type: 'integer', example: 1042, description: 'position in commit order' })
  readonly seq!: number;

  @ApiProperty({ enum: CHANGE_EVENT_TYPES })
  readonly type!: ChangeEventType;

  @ApiProperty({ format: 'date-time' })
  readonly at!: string;

  @ApiProperty({ type: String, nullable: true, description: "the writer's sub, client_id or cid" })
  readonly actor!: string | null;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'tag.*: the tag (tag.deleted: tagId, tagName, hostId); entity.created|updated: the entity as GET answers ' +
      'it plus entityType; entity.deleted: entityType, entityId, hostId; entity.tagged|untagged: entityType, ' +
      "entityId, tagIds. tagIds lists only the tags the reader can see (global ones and its host's; all for " +
      'portal.admin), as GET does. config.changed: host, serviceId, productId, productVersion, envTag, version ' +
      'and keys (the property keys and cert/<name>, file/<name> that changed; never values), only for ' +
      'portal.admin tokens of that host and global admins',
  })
  readonly data!: Record<string, unknown>;
}

export class EventPage {
  @ApiProperty({ type: [EventView] })
  readonly events!: readonly EventView[];

  @ApiProperty({
    type: 'integer',
    description: "the last seq examined (also when events were left out for the caller): the next call's after",
  })
  readonly next!: number;
}

export function toEventView(event: StoredChangeEvent): EventView {
  return {
    seq: event.seq,
    type: event.type,
    at: isoTime(event.at),
    actor: event.actor,
    data: event.data,
  };
}
