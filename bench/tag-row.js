// The auth benchmark's baselines read a tag as the api does: the same statement, the same view.
export const SELECT_TAG = `select tag_id, host_id, tag_name, tag_desc, update_user, update_ts, aggregate_version
  from tag where tag_id = $1`;

/** The api's TagView of a row. */
export const tagView = (t) => ({
  tagId: t.tag_id,
  hostId: t.host_id,
  tagName: t.tag_name,
  tagDesc: t.tag_desc,
  updateUser: t.update_user,
  updateTs: t.update_ts.toISOString(),
  aggregateVersion: t.aggregate_version,
});
