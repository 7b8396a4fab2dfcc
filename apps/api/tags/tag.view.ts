import type { Tag } from './tag.entity.js';

/** A tag on the wire (DESIGN 4.1). */
export interface TagView {
  readonly tagId: string;
  readonly hostId: string | null;
  readonly tagName: string;
  readonly tagDesc: string | null;
  readonly updateUser: string | null;
  readonly updateTs: string;
  readonly aggregateVersion: number;
}

export interface TagPage {
  readonly total: number;
  readonly tags: readonly TagView[];
}

export function toTagView(tag: Tag): TagView {
  return {
    tagId: tag.tagId,
    hostId: tag.hostId,
    tagName: tag.tagName,
    tagDesc: tag.tagDesc,
    updateUser: tag.updateUser,
    updateTs: tag.updateTs.toISOString(),
    aggregateVersion: tag.aggregateVersion,
  };
}
