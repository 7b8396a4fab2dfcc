import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import type { ArgumentMetadata } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { IsArray, IsOptional, IsString } from 'class-validator';
import { PageQueryDto } from './paging.js';
import { ProblemException } from './problem.js';
import { validationPipe } from './validation.js';

const QUERY: ArgumentMetadata = { type: 'query', metatype: PageQueryDto, data: undefined };

/** The pipe's answer: the transformed value, or the status of its refusal. */
async function outcome(pipe: ReturnType<typeof validationPipe>, query: object): Promise<unknown> {
  try {
    return await pipe.transform(Object.assign(Object.create(null) as object, query), QUERY);
  } catch (error) {
    return error instanceof ProblemException ? error.getStatus() : error;
  }
}

describe('validationPipe remembering passing queries', () => {
  it('answers a remembered query exactly as the first time, and still refuses what differs', async () => {
    const pipe = validationPipe();
    for (let round = 0; round < 3; round += 1) {
      expect(await outcome(pipe, {})).toEqual(Object.assign(new PageQueryDto(), { offset: 0, limit: 20 }));
      const page = await outcome(pipe, { offset: '5', limit: '7' });
      expect(page).toBeInstanceOf(PageQueryDto);
      expect(page).toEqual(Object.assign(new PageQueryDto(), { offset: 5, limit: 7 }));
      // A fresh instance each time: a handler changing its query changes nothing remembered.
      (page as PageQueryDto).limit = 99;
      expect(await outcome(pipe, { offset: '5', limit: '7', extra: '1' })).toBe(400);
      expect(await outcome(pipe, { offset: '5', limit: ['7', '8'] })).toBe(400);
      expect(await outcome(pipe, { limit: '0' })).toBe(400);
      expect(await outcome(pipe, { limit: '1001' })).toBe(400);
    }
  });
});

class NamesQuery {
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.split(',') : value))
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  names?: string[];
}

describe('validationPipe remembering a query whose result holds a list', () => {
  it('transforms it again each time: no list is shared between requests', async () => {
    const pipe = validationPipe();
    const metadata: ArgumentMetadata = { type: 'query', metatype: NamesQuery, data: undefined };
    const first = (await pipe.transform({ names: 'a,b' }, metadata)) as NamesQuery;
    first.names?.push('changed');
    for (let round = 0; round < 2; round += 1) {
      const again = (await pipe.transform({ names: 'a,b' }, metadata)) as NamesQuery;
      expect(again).toBeInstanceOf(NamesQuery);
      expect(again.names).toEqual(['a', 'b']);
    }
  });
});
