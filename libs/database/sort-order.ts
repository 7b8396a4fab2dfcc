/** One sort key of a list, as `parseSort` of the platform lib gives it; every repository's lists take these. */
export interface SortOrder<K extends string> {
  readonly key: K;
  readonly descending: boolean;
}
