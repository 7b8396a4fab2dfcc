import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { composeValidator } from '../support/compose.js';

/** deploy/ha and docker-compose.ha.yml (DESIGN 15): the settings the HA tests measured, kept in the shipped files. */
interface PatroniConfig {
  name: string;
  etcd3?: { hosts: string };
  bootstrap: { dcs: Record<string, unknown> };
  postgresql: { basebackup: Record<string, string>[] };
}

describe.each(['node1', 'node2'])('deploy/ha/patroni-%s.yml', (node) => {
  const config = parse(readFileSync(`deploy/ha/patroni-${node}.yml`, 'utf8')) as PatroniConfig;

  it('uses etcd through the v3 API, a synchronous standby and an immediate failover', () => {
    expect(config.name).toBe(node);
    expect(config.etcd3?.hosts).toBe('etcd:2379');
    expect(config.bootstrap.dcs).toMatchObject({ synchronous_mode: true, primary_start_timeout: 0, ttl: 10 });
    const { loop_wait: loopWait, retry_timeout: retryTimeout, ttl } = config.bootstrap.dcs as Record<string, number>;
    expect(loopWait + 2 * retryTimeout).toBeLessThanOrEqual(ttl);
    expect(config.postgresql.basebackup).toContainEqual({ checkpoint: 'fast' });
  });
});

describe('deploy/ha/haproxy.cfg and pgbouncer.ini', () => {
  it('HAProxy routes to the primary only, by Patroni check, and closes sessions of a server marked down', () => {
    const cfg = readFileSync('deploy/ha/haproxy.cfg', 'utf8');
    expect(cfg).toMatch(/^\s*option httpchk OPTIONS \/primary$/m);
    expect(cfg).toMatch(/^\s*http-check expect status 200$/m);
    expect(cfg).toMatch(/on-marked-down shutdown-sessions/);
    expect(cfg.match(/^\s*server patroni\d .* check port 8008$/gm)).toHaveLength(2);
  });

  it('PgBouncer pools by transaction, sets the statement timeout itself and retries logins within a second', () => {
    const ini = readFileSync('deploy/ha/pgbouncer.ini', 'utf8');
    expect(ini).toMatch(/^pool_mode = transaction$/m);
    expect(ini).toMatch(/connect_query='SET statement_timeout = \d+'/);
    expect(ini).toMatch(/^server_login_retry = 1$/m);
  });
});

interface Service {
  image?: string;
  profiles?: string[];
  environment?: Record<string, string>;
}

describe('docker-compose.ha.yml on top of docker-compose.yml', () => {
  const validator = composeValidator();
  const runIt = validator !== undefined || process.env.CI === 'true' ? it : it.skip;

  runIt('parses; postgres:5432 is HAProxy, sessions go there, PgBouncer is opt-in', () => {
    expect(validator).toBeDefined();
    const [command, ...args] = validator!;
    const files = ['-f', 'docker-compose.yml', '-f', 'docker-compose.ha.yml'];
    expect(() => execFileSync(command, [...args, ...files, 'config', '-q'], { stdio: 'pipe' })).not.toThrow();
    const output = execFileSync(command, [...args, ...files, 'config'], { stdio: 'pipe' }).toString('utf8');
    const { services } = parse(output) as { services: Record<string, Service> };
    expect(Object.keys(services)).toEqual(expect.arrayContaining(['etcd', 'patroni1', 'patroni2', 'postgres', 'api']));
    expect(services.postgres?.image).toBe('haproxy:2.6');
    for (const app of ['api', 'controller']) {
      expect(services[app]?.environment?.DATABASE_SESSION_URL).toMatch(/@postgres:5432\/bindery$/);
    }
    // Not started unless asked for (--profile pgbouncer).
    expect(services.pgbouncer?.profiles).toEqual(['pgbouncer']);
  });
});
