import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import type { ArgumentMetadata } from '@nestjs/common';
import { PageQueryDto } from './paging.js';
import { ProblemException } from './problem.js';
import { UNNAMED_PARAMETER } from './request-input.js';
import { validationPipe } from './validation.js';

const QUERY: ArgumentMetadata = { type: 'query', metatype: PageQueryDto, data: undefined };

/** The pipe's answer: the transformed value, or the refusal. */
async function outcome(query: object, metadata: ArgumentMetadata = QUERY): Promise<unknown> {
  try {
    return await validationPipe().transform(Object.assign(Object.create(null) as object, query), metadata);
  } catch (error) {
    return error;
  }
}

describe('validationPipe', () => {
  it('transforms a valid query into its DTO, and refuses what breaks a rule', async () => {
    // No offset default on the DTO: `offset` given beside `cursor` must be told from none (the service reads 0).
    expect(await outcome({})).toEqual(Object.assign(new PageQueryDto(), { limit: 20 }));
    const page = await outcome({ offset: '5', limit: '7' });
    expect(page).toBeInstanceOf(PageQueryDto);
    expect(page).toEqual(Object.assign(new PageQueryDto(), { offset: 5, limit: 7 }));
    for (const refused of [{ limit: ['7', '8'] }, { limit: '0' }, { limit: '1001' }, { offset: '0', cursor: 'abc' }]) {
      expect(await outcome(refused)).toBeInstanceOf(ProblemException);
    }
  });

  it('refuses a query parameter the DTO does not declare without naming it (DESIGN 3)', async () => {
    const error = (await outcome({ limit: '0', 's3cr3t-name': '1' })) as ProblemException;
    expect(error.getStatus()).toBe(400);
    const fields = (error.extras.errors ?? []).map((e) => e.field);
    expect(fields).toEqual(['limit', UNNAMED_PARAMETER]);
    expect(JSON.stringify({ message: error.message, errors: error.extras.errors })).not.toContain('s3cr3t-name');
  });

  it("names an unknown body field: the body is the caller's own, not the query", async () => {
    const body: ArgumentMetadata = { type: 'body', metatype: PageQueryDto, data: undefined };
    const error = (await outcome({ extraField: 1 }, body)) as ProblemException;
    expect(error.getStatus()).toBe(400);
    expect((error.extras.errors ?? []).map((e) => e.field)).toEqual(['extraField']);
  });
});
