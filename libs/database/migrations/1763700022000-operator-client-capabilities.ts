import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';

/**
 * An operator client (without host and sid) may hold an admin capability instead of `portal.admin` (DESIGN
 * 16): the service accepted `{ scopes: ['clients:admin'] }` and the check refused the row, a 500.
 */
export class OperatorClientCapabilities1763700022000 implements MigrationInterface {
  name = 'OperatorClientCapabilities1763700022000';
  // Expand-then-contract (docs/CONTRIBUTING.md): the check only widens; every row the release before wrote passes it.
  readonly step: MigrationStep = 'expand';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`alter table oauth_client drop constraint ck_oauth_client_runtime_identity`);
    await db.query(
      `alter table oauth_client add constraint ck_oauth_client_runtime_identity
         check ((host is not null and sid is not null)
           or scopes && array['portal.admin', 'tags:admin', 'config:admin', 'clients:admin', 'registry:read'])`,
    );
  }

  // Fails while an operator client holds an admin capability without portal.admin: delete it first.
  async down(db: QueryRunner): Promise<void> {
    await db.query(`alter table oauth_client drop constraint ck_oauth_client_runtime_identity`);
    await db.query(
      `alter table oauth_client add constraint ck_oauth_client_runtime_identity
         check ((host is not null and sid is not null) or 'portal.admin' = any (scopes))`,
    );
  }
}
