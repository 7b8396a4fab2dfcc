import { CreateTag1763700000000 } from './1763700000000-create-tag.js';

/** Every migration, oldest first; add new ones at the end. */
export const migrations = [CreateTag1763700000000];
