import { spawnSync } from 'node:child_process';

/**
 * The command that runs `docker compose` here (the plugin, or Debian's docker-compose that .ci/run installs),
 * which validates a compose file's schema; undefined when neither is installed.
 */
export function composeValidator(): string[] | undefined {
  if (spawnSync('docker', ['compose', 'version']).status === 0) return ['docker', 'compose'];
  if (spawnSync('docker-compose', ['version']).status === 0) return ['docker-compose'];
  return undefined;
}
