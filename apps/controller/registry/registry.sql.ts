/**
 * Registration: re-registering the same host+service+env+address+port reuses the row (and so the id),
 * atomically. In its own file so the bench's bare baseline runs exactly this statement.
 */
export const UPSERT = `
  insert into runtime_instance as ri (runtime_instance_id, host_id, service_id, env_tag, version, protocol, address,
    port, tags, status, connected_ts, last_seen_ts, disconnected_ts, controller_id, connection_id)
  values ($1, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, 'connected', now(), now(), null, $10, $11)
  on conflict on constraint uq_runtime_instance_identity do update set
    version = excluded.version, protocol = excluded.protocol, tags = excluded.tags, status = 'connected',
    connected_ts = excluded.connected_ts, last_seen_ts = excluded.last_seen_ts, disconnected_ts = null,
    controller_id = excluded.controller_id, connection_id = excluded.connection_id
  returning ri.runtime_instance_id`;
