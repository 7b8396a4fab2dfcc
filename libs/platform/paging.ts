import { ApiPropertyOptional } from '@nestjs/swagger';
import {
  IsBoolean,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  registerDecorator,
} from 'class-validator';
import { CURSOR_PATTERN, MAX_CURSOR_LENGTH } from './cursor.js';
import { badRequest } from './problem.js';
import { Scalar, toInt } from './validation.js';

export const MAX_PAGE_SIZE = 1000;

/** `true` and `false` as query text; anything else stays text, which `IsBoolean` refuses. */
const toBoolean = (value: string): unknown => (value === 'true' ? true : value === 'false' ? false : value);

/** `cursor` replaces `offset`: a query giving both is refused, naming `cursor`. */
function NotWithOffset(): PropertyDecorator {
  return (target: object, property: string | symbol) =>
    registerDecorator({
      name: 'notWithOffset',
      target: target.constructor,
      propertyName: property as string,
      options: { message: 'cursor continues a list where offset would start it: give one of them, not both' },
      validator: {
        validate: (value: unknown, args) =>
          value === undefined || (args?.object as { offset?: unknown } | undefined)?.offset === undefined,
      },
    });
}

/** `offset` or `cursor`, `limit` and `total`, shared by every list endpoint (DESIGN 4.2). */
export class PageQueryDto {
  // No default here: `offset` given with `cursor` must be told from `offset` left out (the service reads 0).
  @ApiPropertyOptional({ type: 'integer', default: 0, minimum: 0, description: 'matches to skip; not with cursor' })
  @IsOptional()
  @Scalar(toInt)
  @IsInt()
  @Min(0)
  offset?: number;

  @ApiPropertyOptional({ type: 'integer', default: 20, minimum: 1, maximum: MAX_PAGE_SIZE })
  @IsOptional()
  @Scalar(toInt)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit = 20;

  @ApiPropertyOptional({
    maxLength: MAX_CURSOR_LENGTH,
    pattern: CURSOR_PATTERN.source,
    description:
      'the next of the previous page: continues after its last match, with the same filter and sort (limit may change); not with offset',
  })
  @IsOptional()
  @Scalar()
  @IsString()
  @MaxLength(MAX_CURSOR_LENGTH)
  @Matches(CURSOR_PATTERN, { message: 'cursor is not a cursor of this API' })
  @NotWithOffset()
  cursor?: string;

  @ApiPropertyOptional({
    type: 'boolean',
    description: 'count every match (total): by default on offset pages, not on cursor pages',
  })
  @IsOptional()
  @Scalar(toBoolean)
  @IsBoolean({ message: 'total must be true or false' })
  total?: boolean;
}

/** The paging fields of every list's answer; a list's page class extends it with its items. */
export class PageFields {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    description: 'all matches, not just this page; absent on a cursor page unless total=true, or with total=false',
  })
  readonly total?: number;

  @ApiPropertyOptional({
    pattern: CURSOR_PATTERN.source,
    description: 'opaque cursor of the page after this one (pass it as cursor); absent when no match follows',
  })
  readonly next?: string;
}

export interface SortKey<K extends string> {
  readonly key: K;
  readonly descending: boolean;
}

/** Parses `sort=a,-b` against the allowed keys; duplicates are refused so the order is unambiguous. */
export function parseSort<K extends string>(
  sort: string | undefined,
  allowed: readonly K[],
  fallback: K,
): SortKey<K>[] {
  if (sort === undefined || sort.trim() === '') return [{ key: fallback, descending: false }];
  const seen = new Set<string>();
  return sort.split(',').map((raw) => {
    const part = raw.trim();
    const descending = part.startsWith('-');
    const key = descending ? part.slice(1) : part;
    if (!(allowed as readonly string[]).includes(key)) {
      throw badRequest(`sort must be a comma list of ${allowed.join(', ')}, each optionally prefixed by -`, [
        // The key is not quoted back: no error answer echoes the query (DESIGN 3).
        { field: 'sort', message: `a sort key is not one of ${allowed.join(', ')}` },
      ]);
    }
    if (seen.has(key))
      throw badRequest(`sort names ${key} twice`, [{ field: 'sort', message: `repeated key "${key}"` }]);
    seen.add(key);
    return { key: key as K, descending };
  });
}

/** Escapes LIKE wildcards so user text is matched literally (backslash is PostgreSQL's default escape). */
export const likePattern = (text: string): string => `%${text.replace(/[\\%_]/g, '\\$&')}%`;
