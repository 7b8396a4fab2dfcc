import { join } from 'node:path';

/** The configuration files of test/ha's cluster, kept beside the deploy/ha files they mirror. */
const PG_BIN = '/usr/lib/postgresql/15/bin';

/** What a node's configuration names: its ports and data directory. */
export interface NodePorts {
  readonly name: string;
  readonly pgPort: number;
  readonly restPort: number;
  readonly dataDir: string;
}

/** deploy/ha/patroni-node*.yml with loopback ports: the settings STACK.md measured as fast and deterministic. */
export function patroniConfig(scope: string, node: NodePorts, etcdPort: number, dir: string): string {
  return `scope: ${scope}
name: ${node.name}
restapi:
  listen: 127.0.0.1:${node.restPort}
  connect_address: 127.0.0.1:${node.restPort}
etcd3:
  hosts: 127.0.0.1:${etcdPort}
bootstrap:
  dcs:
    ttl: 10
    loop_wait: 2
    retry_timeout: 4
    maximum_lag_on_failover: 1048576
    synchronous_mode: true
    primary_start_timeout: 0
    postgresql:
      use_pg_rewind: true
      parameters:
        wal_log_hints: 'on'
        max_connections: 200
  initdb:
    - encoding: UTF8
    - auth-local: trust
    - auth-host: trust
  pg_hba:
    - local all all trust
    - host all all 127.0.0.1/32 trust
    - host replication all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:${node.pgPort}
  connect_address: 127.0.0.1:${node.pgPort}
  data_dir: ${node.dataDir}
  bin_dir: ${PG_BIN}
  pgpass: ${join(dir, `${node.name}.pgpass`)}
  authentication:
    superuser:
      username: postgres
      password: postgres
    replication:
      username: postgres
      password: postgres
    rewind:
      username: postgres
      password: postgres
  basebackup:
    - checkpoint: fast
  parameters:
    unix_socket_directories: '${dir}'
    fsync: 'off'
`;
}

/** deploy/ha/haproxy.cfg with loopback ports: the primary only, by Patroni's `OPTIONS /primary`. */
export function haproxyConfigFor(port: number, nodes: readonly NodePorts[]): string {
  return `global
  maxconn 400
defaults
  mode tcp
  timeout connect 4s
  timeout client 30m
  timeout server 30m
  timeout check 2s
listen primary
  bind 127.0.0.1:${port}
  option httpchk OPTIONS /primary
  http-check expect status 200
  default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
${nodes.map((n) => `  server ${n.name} 127.0.0.1:${n.pgPort} maxconn 200 check port ${n.restPort}`).join('\n')}
`;
}

/** PgBouncer in transaction mode in front of HAProxy; `users.txt` beside it lets `postgres` in. */
export function pgbouncerIni(dir: string, port: number, upstreamPort: number, statementTimeoutMs: number): string {
  return [
    '[databases]',
    // The timeout is the pooler's: PgBouncer refuses it as a client start-up parameter (DESIGN 15).
    `* = host=127.0.0.1 port=${upstreamPort} connect_query='SET statement_timeout = ${statementTimeoutMs}'`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    `unix_socket_dir = ${dir}`,
    'auth_type = trust',
    `auth_file = ${join(dir, 'users.txt')}`,
    'pool_mode = transaction',
    'max_client_conn = 200',
    'default_pool_size = 20',
    'server_login_retry = 1',
    '',
  ].join('\n');
}
