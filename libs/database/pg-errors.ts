import { QueryFailedError } from 'typeorm';

/** PostgreSQL SQLSTATE codes the services map to HTTP answers. */
export const PG_UNIQUE_VIOLATION = '23505';
export const PG_FOREIGN_KEY_VIOLATION = '23503';

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

/** The violated constraint's name when `error` is a foreign-key violation, else undefined. */
export function foreignKeyViolation(error: unknown): string | undefined {
  const pg = driverError(error);
  return pg?.code === PG_FOREIGN_KEY_VIOLATION ? (pg.constraint ?? '') : undefined;
}
