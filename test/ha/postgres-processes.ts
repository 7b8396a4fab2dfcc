import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** PostgreSQL, Patroni and PgBouncer refuse root: setpriv's arguments to run them as `postgres`. */
export const AS_POSTGRES = ['--reuid=postgres', '--regid=postgres', '--init-groups'];
export const postgresIds = (): { uid: number; gid: number } => {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (line === undefined) throw new Error('no postgres user: install postgresql');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid) };
};

export function tryKill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
}

export function postmasterPid(node: { readonly dataDir: string }): number | undefined {
  const file = join(node.dataDir, 'postmaster.pid');
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}
