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
