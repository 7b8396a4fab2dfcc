import { IdColumn, TaggableEntity, TaggableTable, TextColumn } from './taggable.entity.js';

/** A document (table `document`, DESIGN 5.1). */
@TaggableTable('document', 'ix_document_title_keyset')
export class DocumentEntity extends TaggableEntity {
  @IdColumn('document') documentId!: string;
  @TextColumn('title', 200, false) title!: string;
  @TextColumn('content_type', 255) contentType!: string | null;
  @TextColumn('body') body!: string | null;
}
