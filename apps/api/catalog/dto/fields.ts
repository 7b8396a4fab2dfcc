import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsOptional, IsString, Length, Matches, MaxLength, ValidateIf } from 'class-validator';
import { ID_PATTERN } from '#platform';

/** Most tags one entity may carry (DESIGN 5.2). */
export const MAX_TAGS_PER_ENTITY = 50;

/** Largest body text (`schemaBody`, document `body`), in characters; the request limit is 1 MiB anyway. */
export const MAX_BODY_CHARS = 256 * 1024;

const NO_CONTROL_CHARS = /^[^\p{Cc}]*$/u;
const noControlChars = Matches(NO_CONTROL_CHARS, { message: '$property must not contain control characters' });
const trim = ({ value }: { value: unknown }): unknown => (typeof value === 'string' ? value.trim() : value);
/** null and omitted both mean "none"; anything else is validated. */
const given = (_: object, value: unknown): boolean => value !== null && value !== undefined;

/** An optional resource id in a body; generated when omitted (DESIGN 5.1). */
export const IdField = (): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({
      type: String,
      pattern: ID_PATTERN.source,
      description: 'generated (base64url UUIDv7) when omitted',
    }),
    IsOptional(),
    IsString(),
    Matches(ID_PATTERN, { message: '$property must be 1..22 characters of A-Z, a-z, 0-9, _ and -' }),
  );

/** A required one-line name: trimmed, 1..max characters, no control characters. */
export const NameField = (max: number): PropertyDecorator =>
  applyDecorators(
    ApiProperty({ type: String, minLength: 1, maxLength: max, description: 'trimmed; no control characters' }),
    Transform(trim),
    IsString(),
    Length(1, max),
    noControlChars,
  );

/** An entity's host; null or omitted: a global entity (as for tags, DESIGN 4.3). */
export const HostIdField = (): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({
      type: String,
      nullable: true,
      minLength: 1,
      maxLength: 22,
      description: 'null or omitted: a global entity',
    }),
    ValidateIf(given),
    IsString(),
    Length(1, 22),
    noControlChars,
  );

/** An optional one-line text (versions, types): trimmed, up to max characters. */
export const LineField = (max: number): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({
      type: String,
      nullable: true,
      maxLength: max,
      description: 'trimmed; no control characters',
    }),
    Transform(trim),
    ValidateIf(given),
    IsString(),
    MaxLength(max),
    noControlChars,
  );

/** An optional free text (descriptions, bodies): kept as sent, line breaks allowed. */
export const TextField = (max: number): PropertyDecorator =>
  applyDecorators(
    ApiPropertyOptional({
      type: String,
      nullable: true,
      maxLength: max,
      description: 'kept as sent; line breaks allowed',
    }),
    ValidateIf(given),
    IsString(),
    MaxLength(max),
  );

/** Distinct ids, sorted, so repeated ids count once against the limit (DESIGN 5.2). */
const distinctSorted = ({ value }: { value: unknown }): unknown =>
  Array.isArray(value) && value.every((item) => typeof item === 'string') ? [...new Set(value)].sort() : value;

/** A list of tag ids; `required` false lets it be omitted (PUT without tagIds keeps the links). */
export const TagIdsField = (required: boolean): PropertyDecorator =>
  applyDecorators(
    ApiProperty({
      type: [String],
      required,
      maxItems: MAX_TAGS_PER_ENTITY,
      example: ['AZNbq1s3dHqQeJ2dn8xv1A'],
      description: required
        ? 'the complete new set of tag ids; repeated ids count once'
        : 'ids of existing tags the caller can see; repeated ids count once; omitted on PUT: links unchanged',
    }),
    Transform(distinctSorted),
    ...(required ? [] : [ValidateIf((_: object, value: unknown) => value !== undefined)]),
    IsArray(),
    ArrayMaxSize(MAX_TAGS_PER_ENTITY, { message: `$property must name at most ${MAX_TAGS_PER_ENTITY} distinct tags` }),
    IsString({ each: true }),
    Matches(ID_PATTERN, {
      each: true,
      message: 'each of $property must be 1..22 characters of A-Z, a-z, 0-9, _ and -',
    }),
  );
