import { execFile } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { freePort, runCommand, type Spawned } from '../support/processes.js';
import { waitFor } from '../support/wait.js';
import { haproxyConfigFor, patroniConfig, pgbouncerIni } from './cluster-config.js';
import { AS_POSTGRES, postgresIds, postmasterPid, tryKill } from './postgres-processes.js';

/**
 * The reference HA setup of deploy/ha (DESIGN 15) on loopback ports, with Debian's programs: etcd, two
 * Patroni-managed PostgreSQL 15 servers (a primary and a synchronous standby), HAProxy routing to the
 * primary by Patroni's REST check, and PgBouncer in transaction mode on demand. PostgreSQL, Patroni and
 * PgBouncer refuse root: they run as `postgres` through setpriv (no wrapper process that could orphan them).
 */
const sh = promisify(execFile);

export interface Node {
  readonly name: string;
  readonly pgPort: number;
  readonly restPort: number;
  readonly dataDir: string;
  readonly config: string;
  patroni: Spawned | undefined;
}

export interface Member {
  readonly name: string;
  readonly role: string;
  readonly state: string;
}

export class Cluster {
  readonly nodes: Node[] = [];
  private readonly spawned: Spawned[] = [];
  private etcd: Spawned | undefined;
  private haproxy: Spawned | undefined;
  private pgbouncer: Spawned | undefined;
  haproxyPort = 0;
  pgbouncerPort = 0;

  private constructor(readonly dir: string) {}

  /** etcd, both Patroni nodes and HAProxy; resolves once a leader and a streaming sync standby exist. */
  static async start(): Promise<Cluster> {
    const dir = mkdtempSync(join(tmpdir(), 'bindery-ha-'));
    const cluster = new Cluster(dir);
    // Killed with the test runner, whatever happens to it (afterAll may never run).
    process.once('exit', () => cluster.killAll());
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        cluster.killAll();
        process.exit(1);
      });
    }
    try {
      await cluster.boot();
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  private async boot(): Promise<void> {
    const { uid, gid } = postgresIds();
    chownSync(this.dir, uid, gid);
    const etcdClient = await freePort();
    const etcdPeer = await freePort();
    this.etcd = this.track(
      runCommand(
        'etcd',
        [
          '--name=ha',
          `--data-dir=${join(this.dir, 'etcd')}`,
          `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
          `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
          `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
          `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
          `--initial-cluster=ha=http://127.0.0.1:${etcdPeer}`,
        ],
        {},
      ),
    );
    await until(
      () =>
        fetch(`http://127.0.0.1:${etcdClient}/health`).then(
          (r) => r.ok,
          () => false,
        ),
      'etcd',
      20_000,
    );
    const scope = `bindery-ha-${process.pid}`;
    for (const name of ['node1', 'node2']) {
      const node: Node = {
        name,
        pgPort: await freePort(),
        restPort: await freePort(),
        dataDir: join(this.dir, name),
        config: join(this.dir, `${name}.yml`),
        patroni: undefined,
      };
      writeFileSync(node.config, patroniConfig(scope, node, etcdClient, this.dir));
      chownSync(node.config, uid, gid);
      this.nodes.push(node);
    }
    // The first node bootstraps alone, so it is the leader; the second clones it.
    this.startPatroni(this.nodes[0]);
    await until(
      async () => (await this.members()).some((m) => m.role === 'leader' && m.state === 'running'),
      'a leader',
      60_000,
    );
    this.startPatroni(this.nodes[1]);
    await this.healthy();
    this.haproxyPort = await freePort();
    const haproxyConfig = join(this.dir, 'haproxy.cfg');
    writeFileSync(haproxyConfig, haproxyConfigFor(this.haproxyPort, this.nodes));
    this.haproxy = this.track(runCommand('haproxy', ['-f', haproxyConfig, '-db'], {}));
    await until(() => this.accepts(this.url()), 'HAProxy to a primary', 20_000);
  }

  /** A leader and a synchronous standby that streams: a failover may promote it without losing a commit. */
  async healthy(timeoutMs = 90_000): Promise<Member[]> {
    let members: Member[] = [];
    await until(
      async () => {
        members = await this.members();
        return (
          members.some((m) => m.role === 'leader' && m.state === 'running') &&
          members.some((m) => m.role === 'sync_standby' && (m.state === 'streaming' || m.state === 'running'))
        );
      },
      'a leader and a streaming sync standby',
      timeoutMs,
    );
    return members;
  }

  /** Patroni's view of the cluster (from whichever node answers). */
  async members(): Promise<Member[]> {
    for (const node of this.nodes) {
      try {
        const response = await fetch(`http://127.0.0.1:${node.restPort}/cluster`, {
          signal: AbortSignal.timeout(1000),
        });
        if (response.ok) return ((await response.json()) as { members: Member[] }).members;
      } catch {
        // That node's Patroni is down or busy: ask the other.
      }
    }
    return [];
  }

  async leader(): Promise<Node> {
    const leader = (await this.members()).find((m) => m.role === 'leader');
    const node = this.nodes.find((n) => n.name === leader?.name);
    if (node === undefined) throw new Error('no leader');
    return node;
  }

  /** `patronictl switchover` to the other node (the operator's planned move). */
  async switchover(): Promise<void> {
    const leader = await this.leader();
    const candidate = this.nodes.find((n) => n !== leader)!;
    await sh('patronictl', [
      '-c',
      leader.config,
      'switchover',
      '--leader',
      leader.name,
      '--candidate',
      candidate.name,
      '--force',
    ]);
  }

  /** SIGKILL of the primary's postmaster: its backends die with it, Patroni promotes the sync standby. */
  async killPrimary(): Promise<Node> {
    const leader = await this.leader();
    process.kill(postmasterPid(leader)!, 'SIGKILL');
    return leader;
  }

  /** `postgres://postgres@127.0.0.1:<HAProxy>/postgres`: always the primary. */
  url(port = this.haproxyPort): string {
    return `postgres://postgres@127.0.0.1:${port}/postgres`;
  }

  /** PgBouncer 1.18 in transaction mode in front of HAProxy, for the pooler check. */
  async startPgBouncer(statementTimeoutMs: number): Promise<string> {
    const { uid, gid } = postgresIds();
    const dir = join(this.dir, 'pgbouncer');
    mkdirSync(dir);
    this.pgbouncerPort = await freePort();
    const ini = join(dir, 'pgbouncer.ini');
    writeFileSync(join(dir, 'users.txt'), '"postgres" ""\n');
    writeFileSync(ini, pgbouncerIni(dir, this.pgbouncerPort, this.haproxyPort, statementTimeoutMs));
    for (const file of [dir, ini, join(dir, 'users.txt')]) chownSync(file, uid, gid);
    this.pgbouncer = this.track(runCommand('setpriv', [...AS_POSTGRES, 'pgbouncer', ini], {}));
    const url = this.url(this.pgbouncerPort);
    await until(() => this.accepts(url), 'PgBouncer', 20_000);
    return url;
  }

  async query<T>(url: string, sql: string, parameters: unknown[] = []): Promise<T[]> {
    const pg = (await import('pg')).default;
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
    await client.connect();
    try {
      return (await client.query(sql, parameters)).rows as T[];
    } finally {
      await client.end();
    }
  }

  /** Whether `url` answers a query now. */
  private accepts(url: string): Promise<boolean> {
    return this.query(url, 'select 1').then(
      () => true,
      () => false,
    );
  }

  /** Output of every program, for a failure message. */
  logs(): string {
    return this.spawned.map((s) => s.output().split('\n').slice(-15).join('\n')).join('\n----\n');
  }

  /**
   * Stops everything: HAProxy and PgBouncer, the replica's Patroni before the leader's, then etcd; then lets
   * go of every program's output pipes. Nothing of the cluster is left to hold the test runner open.
   */
  async stop(): Promise<void> {
    const proxies = [this.pgbouncer, this.haproxy].filter((p) => p !== undefined);
    for (const p of proxies) p.child.kill('SIGTERM');
    const leader = await this.leader().catch(() => undefined);
    const order = [...this.nodes.filter((n) => n !== leader), ...(leader ? [leader] : [])];
    for (const node of order) {
      node.patroni?.child.kill('SIGTERM');
      // SIGKILL after 15 s (its timer cleared once it exits): Patroni stops its PostgreSQL first.
      await node.patroni?.exit(15_000);
    }
    await Promise.all(proxies.map((p) => p.exit(5_000)));
    this.killAll();
    // PostgreSQL runs detached from Patroni but writes to Patroni's stdout and stderr (it inherits them): a
    // server process still going would keep these pipes, and with them the test runner, open.
    for (const s of this.spawned) {
      s.child.stdout?.destroy();
      s.child.stderr?.destroy();
    }
    await Promise.all(this.spawned.map((s) => s.exit(5_000)));
    await delay(200);
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** SIGKILL of whatever still runs, PostgreSQL servers Patroni detached included. */
  private killAll(): void {
    for (const node of this.nodes) {
      const pid = postmasterPid(node);
      if (pid !== undefined) tryKill(pid);
    }
    for (const s of this.spawned) if (s.child.exitCode === null && s.child.pid !== undefined) tryKill(s.child.pid);
  }

  private startPatroni(node: Node): void {
    node.patroni = this.track(runCommand('setpriv', [...AS_POSTGRES, 'patroni', node.config], {}));
  }

  private track(spawned: Spawned): Spawned {
    this.spawned.push(spawned);
    return spawned;
  }
}

/** `waitFor` at the cluster's pace: each check may ask Patroni or open a connection. */
export const until = (check: () => boolean | Promise<boolean>, what: string, timeoutMs: number): Promise<void> =>
  waitFor(check, what, timeoutMs, 200);
