import { QueryFailedError } from 'typeorm';

/** The PostgreSQL SQLSTATE services answer with 409 (through `DuplicateKeyError`). */
const PG_UNIQUE_VIOLATION = '23505';

interface PgDriverError {
  code?: string;
  constraint?: string;
}

function driverError(error: unknown): PgDriverError | undefined {
  if (error instanceof QueryFailedError) return error.driverError as PgDriverError;
  if (typeof error === 'object' && error !== null && 'code' in error) return error as PgDriverError;
  return undefined;
}

/** The violated constraint's name when `error` is a unique violation, else undefined. */
export function uniqueViolation(error: unknown): string | undefined {
  const pg = driverError(error);
  return pg?.code === PG_UNIQUE_VIOLATION ? (pg.constraint ?? '') : undefined;
}

/** The SQLSTATE of a pg error, or of the one a TypeORM error wraps; undefined for anything else. */
export function sqlStateOf(error: unknown): string | undefined {
  return driverError(error)?.code;
}

/** PostgreSQL broke a deadlock by aborting this statement's transaction (`40P01`): nothing of it committed. */
export function deadlocked(error: unknown): boolean {
  return sqlStateOf(error) === '40P01';
}
