import { EntityBodyDto } from './entity-body.dto.js';
import { IdField, LineField, MAX_BODY_CHARS, NameField, TextField } from './fields.js';

/** Body of POST /documents and PUT /documents/{documentId}. */
export class DocumentBodyDto extends EntityBodyDto {
  @IdField() documentId?: string;
  @NameField(200) title!: string;
  @LineField(255) contentType?: string | null;
  @TextField(MAX_BODY_CHARS) body?: string | null;
}
