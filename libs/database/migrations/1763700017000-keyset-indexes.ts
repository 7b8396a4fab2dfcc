import type { MigrationInterface, QueryRunner } from 'typeorm';
import type { MigrationStep } from './step.js';

/**
 * Indexes in the default order of the lists that had none (DESIGN 4.2 cursor paging): a cursor's page is a
 * range of the index from the last row on, so a page at the end of a million rows costs what the first does.
 * Tags (`uq_tag_name_lower`, unique), clients and history (their primary keys), the reverse lookup
 * (`ix_entity_tag_tag`) and instances (`uq_runtime_instance_identity`, unique) are served already.
 */
export class KeysetIndexes1763700017000 implements MigrationInterface {
  name = 'KeysetIndexes1763700017000';
  // Expand-then-contract (docs/CONTRIBUTING.md): only adds indexes; the previous release keeps working.
  readonly step: MigrationStep = 'expand';

  async up(db: QueryRunner): Promise<void> {
    // Names sort case-insensitively, then the id breaks ties: exactly the lists' ORDER BY.
    await db.query(`create index ix_schema_name_keyset on schema (lower(schema_name), schema_id)`);
    await db.query(`create index ix_product_name_keyset on product (lower(product_name), product_id)`);
    await db.query(`create index ix_document_title_keyset on document (lower(title), document_id)`);
    // The layer list puts a layer for all environments first: env_tag NULLs first, unlike the address index.
    await db.query(`
      create index ix_config_layer_keyset
        on config_layer (host, service_id, product_id, product_version, env_tag nulls first, layer_id)`);
  }

  async down(db: QueryRunner): Promise<void> {
    await db.query(`drop index ix_config_layer_keyset`);
    await db.query(`drop index ix_document_title_keyset`);
    await db.query(`drop index ix_product_name_keyset`);
    await db.query(`drop index ix_schema_name_keyset`);
  }
}
