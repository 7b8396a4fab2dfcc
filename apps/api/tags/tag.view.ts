import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { Tag } from '#database';
import { isoTime, PageFields } from '#platform';

/** A tag on the wire (DESIGN 4.1); a class only so the OpenAPI document can describe it. */
export class TagView {
  @ApiProperty({ example: 'AZNbq1s3dHqQeJ2dn8xv1A', pattern: '^[A-Za-z0-9_-]{1,22}$' })
  readonly tagId!: string;

  @ApiProperty({ type: String, nullable: true, maxLength: 22, description: 'null: a global tag' })
  readonly hostId!: string | null;

  @ApiProperty({ example: 'pii', maxLength: 100, description: 'unique across all tags, case-insensitively' })
  readonly tagName!: string;

  @ApiProperty({ type: String, nullable: true, maxLength: 1024, example: 'personal data' })
  readonly tagDesc!: string | null;

  @ApiProperty({ type: String, nullable: true, description: "the writer's sub, client_id or cid" })
  readonly updateUser!: string | null;

  @ApiProperty({ format: 'date-time' })
  readonly updateTs!: string;

  @ApiProperty({ example: 1, description: 'also sent as the ETag W/"<n>"' })
  readonly aggregateVersion!: number;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'integer' },
    example: { schema: 3, product: 0, document: 1 },
    description: 'with include=usage: entities of each type carrying the tag, counting only those you can see',
  })
  readonly usage?: Readonly<Record<string, number>>;
}

export class TagPage extends PageFields {
  @ApiProperty({ type: [TagView] })
  readonly tags!: readonly TagView[];
}

export class TaggedEntityView {
  @ApiProperty({ example: 'schema' })
  readonly entityType!: string;

  @ApiProperty({ example: 'pet' })
  readonly entityId!: string;
}

export class TaggedEntityPage extends PageFields {
  @ApiProperty({ type: [TaggedEntityView], description: 'sorted by entityType, then entityId' })
  readonly entities!: readonly TaggedEntityView[];
}

export function toTagView(tag: Tag): TagView {
  return {
    tagId: tag.tagId,
    hostId: tag.hostId,
    tagName: tag.tagName,
    tagDesc: tag.tagDesc,
    updateUser: tag.updateUser,
    updateTs: isoTime(tag.updateTs),
    aggregateVersion: tag.aggregateVersion,
  };
}
