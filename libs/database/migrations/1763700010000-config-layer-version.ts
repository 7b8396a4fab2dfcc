import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';

/** A config layer's version (DESIGN 7): its `GET` carries it as the ETag, `PUT` and `DELETE` honour `If-Match`. */
export class ConfigLayerVersion1763700010000 implements MigrationInterface {
  name = 'ConfigLayerVersion1763700010000';
  // Expand-then-contract (docs/CONTRIBUTING.md): only adds; the previous release keeps working.
  readonly step: MigrationStep = 'expand';

  async up(db: QueryRunner): Promise<void> {
    await db.query(`alter table config_layer add column aggregate_version integer not null default 1`);
    await db.query(`alter table config_layer add constraint ck_config_layer_version check (aggregate_version >= 1)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`alter table config_layer drop column aggregate_version`);
  }
}
