import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsString, Matches, ValidateIf } from 'class-validator';
import { ID_PATTERN } from '#platform';

/** Most tags one entity may carry (DESIGN 5.2). */
export const MAX_TAGS_PER_ENTITY = 50;

/** Largest body text (`schemaBody`, document `body`), in characters; the request limit is 1 MiB anyway. */
export const MAX_BODY_CHARS = 256 * 1024;

export { HostIdField, IdField, LineField, NameField, TextField } from '#platform';

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
