import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { Scalar, PageQueryDto } from '#platform';

export const TAG_MATCHES = ['any', 'all'] as const;
export type TagMatch = (typeof TAG_MATCHES)[number];

/** Most names one filter may list. */
export const MAX_TAG_NAMES = 100;

/**
 * `tagNames=a,b&tagNames=c`: repeated and comma-separated forms combine; names are trimmed, blanks
 * dropped, and names equal but for case count once (they name the same tag).
 */
function splitTagNames({ value }: { value: unknown }): unknown {
  const parts = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(parts) || !parts.every((part) => typeof part === 'string')) return value;
  const names = new Map<string, string>();
  for (const name of parts.flatMap((part) => part.split(',')).map((part) => part.trim())) {
    if (name !== '' && !names.has(name.toLowerCase())) names.set(name.toLowerCase(), name);
  }
  return [...names.values()];
}

/** Query of GET /schemas, /products, /documents (DESIGN 5.2). */
export class ListEntitiesQuery extends PageQueryDto {
  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_TAG_NAMES,
    description: 'tag names, repeated and/or comma-separated (tagNames=a,b&tagNames=c); compared case-insensitively',
  })
  @IsOptional()
  @Transform(splitTagNames)
  @IsArray()
  @ArrayMaxSize(MAX_TAG_NAMES)
  @IsString({ each: true })
  @MaxLength(100, { each: true })
  tagNames?: string[];

  @ApiPropertyOptional({
    enum: TAG_MATCHES,
    default: 'any',
    description: 'any: at least one of tagNames; all: every one of them',
  })
  @IsOptional()
  @Scalar()
  @IsIn(TAG_MATCHES)
  tagMatch: TagMatch = 'any';

  @ApiPropertyOptional({ maxLength: 22, description: "exact host id: only that host's entities" })
  @IsOptional()
  @Scalar()
  @IsString()
  @MaxLength(22)
  hostId?: string;

  @ApiPropertyOptional({
    maxLength: 200,
    description: 'comma list of sort keys (see the operation), each optionally prefixed by - for descending',
    example: '-updateTs',
  })
  @IsOptional()
  @Scalar()
  @IsString()
  @MaxLength(200)
  sort?: string;
}
