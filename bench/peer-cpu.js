// CPU time a run cost, read from /proc: the server process's (all its threads), and PostgreSQL's backends
// connected to the bench database. On a shared machine requests per second move with everyone else's load;
// CPU per request moves much less, so the peer benchmark reports both.
import { readFileSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** utime + stime of a process in ms, or undefined when it is gone (or not on this machine). */
export function processCpuMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command (which may hold spaces), from field 3 on: utime is 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return undefined;
  }
}

/** CPU ms per backend pid of `database`, but the session of `client` (which asks). */
async function backendsCpu(client, database) {
  const { rows } = await client.query(
    'select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
    [database],
  );
  const cpu = new Map();
  for (const { pid } of rows) {
    const ms = processCpuMs(pid);
    if (ms !== undefined) cpu.set(pid, ms);
  }
  return cpu;
}

/**
 * Starts counting: `stop()` answers the CPU ms the server process and the database's backends used since.
 * Backends opened during the run count whole; one closed before `stop()` is missed (pools keep theirs
 * under load). `client` is a session on the bench database that stays idle during the run.
 */
export async function cpuMeter(serverPid, client, database) {
  const server0 = processCpuMs(serverPid);
  const db0 = await backendsCpu(client, database);
  return {
    async stop() {
      const server = processCpuMs(serverPid) - server0;
      const db1 = await backendsCpu(client, database);
      let db = 0;
      for (const [pid, ms] of db1) db += ms - (db0.get(pid) ?? 0);
      return { serverMs: server, dbMs: db };
    },
  };
}
