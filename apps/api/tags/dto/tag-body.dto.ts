import { HostIdField, IdField, NameField, TextField } from '#platform';

/** Body of POST /tags and PUT /tags/{tagId} (DESIGN 4.1). */
export class TagBodyDto {
  @IdField()
  tagId?: string;

  @HostIdField('null or omitted: a global tag')
  hostId?: string | null;

  @NameField(100, 'trimmed; unique case-insensitively; no control characters')
  tagName!: string;

  @TextField(1024)
  tagDesc?: string | null;
}
