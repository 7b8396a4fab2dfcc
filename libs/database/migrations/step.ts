import type { MigrationInterface } from 'typeorm';

/**
 * Which step of expand-then-contract a migration is (DESIGN 15, docs/CONTRIBUTING.md): `expand` only adds
 * (tables, nullable columns or columns with defaults, indexes, functions under new names); `contract`
 * removes what the release before the current one stopped using.
 */
export type MigrationStep = 'expand' | 'contract';

/** A Bindery migration: TypeORM's, saying which step it is. */
export interface SteppedMigration extends MigrationInterface {
  readonly step: MigrationStep;
}
