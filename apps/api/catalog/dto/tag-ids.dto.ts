import { TagIdsField } from './fields.js';

/** Body of PUT /{type}/{id}/tags: the complete new set of tag ids. */
export class TagIdsDto {
  @TagIdsField(true) tagIds!: string[];
}
