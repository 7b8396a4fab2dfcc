import { IdColumn, TaggableEntity, TaggableTable, TextColumn } from './taggable.entity.js';

/** A schema (table `schema`, DESIGN 5.1). */
@TaggableTable('schema', 'ix_schema_name_keyset')
export class SchemaEntity extends TaggableEntity {
  @IdColumn('schema') schemaId!: string;
  @TextColumn('schema_name', 100, false) schemaName!: string;
  @TextColumn('schema_version', 50) schemaVersion!: string | null;
  @TextColumn('schema_type', 50) schemaType!: string | null;
  @TextColumn('schema_desc', 1024) schemaDesc!: string | null;
  @TextColumn('schema_body') schemaBody!: string | null;
}
