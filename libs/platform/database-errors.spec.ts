import { describe, expect, it } from '@jest/globals';
import { QueryFailedError } from 'typeorm';
import { isDatabaseUnavailable } from './database-errors.js';

const pgError = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it.each([
    ['admin shutdown 57P01', pgError('57P01'), true],
    ['connection failure class 08', pgError('08006'), true],
    ['too many connections 53300', pgError('53300'), true],
    ['statement timeout 57014', pgError('57014'), true],
    ['refused socket', pgError('ECONNREFUSED'), true],
    ['node-postgres lost connection', new Error('Connection terminated unexpectedly'), true],
    [
      "TypeORM's released query runner inside a transaction",
      new Error('Database connection provided by a query runner was already released, cannot continue'),
      true,
    ],
    [
      "TypeORM's released query runner at COMMIT (the outcome is unknown: retry)",
      new Error('Query runner already released. Cannot run queries anymore.'),
      true,
    ],
    ['wrapped by TypeORM', new QueryFailedError('select 1', [], pgError('57P03')), true],
    ['an AggregateError of refused addresses', new AggregateError([pgError('ECONNREFUSED')]), true],
    ['a unique violation', pgError('23505'), false],
    ['a syntax error', pgError('42601'), false],
    ['anything else', new Error('boom'), false],
  ])('%s → %s', (_, error, expected) => {
    expect(isDatabaseUnavailable(error)).toBe(expected);
  });
});
