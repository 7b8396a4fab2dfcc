import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { badRequest } from './problem.js';
import { Scalar, toInt } from './validation.js';

export const MAX_PAGE_SIZE = 1000;

/** `offset` and `limit`, shared by every list endpoint. */
export class PageQueryDto {
  @ApiPropertyOptional({ type: 'integer', default: 0, minimum: 0 })
  @IsOptional()
  @Scalar(toInt)
  @IsInt()
  @Min(0)
  offset = 0;

  @ApiPropertyOptional({ type: 'integer', default: 20, minimum: 1, maximum: MAX_PAGE_SIZE })
  @IsOptional()
  @Scalar(toInt)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit = 20;
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
