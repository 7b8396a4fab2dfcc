import { EntityBodyDto } from './entity-body.dto.js';
import { IdField, LineField, MAX_BODY_CHARS, NameField, TextField } from './fields.js';

/** Body of POST /schemas and PUT /schemas/{schemaId}. */
export class SchemaBodyDto extends EntityBodyDto {
  @IdField() schemaId?: string;
  @NameField(100) schemaName!: string;
  @LineField(50) schemaVersion?: string | null;
  @LineField(50) schemaType?: string | null;
  @TextField(1024) schemaDesc?: string | null;
  @TextField(MAX_BODY_CHARS) schemaBody?: string | null;
}
