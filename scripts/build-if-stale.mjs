// Runs the TypeScript build only when a source is newer than the last build, so `npm start` and
// `npm run token` start at once when dist/ is current. Plain JavaScript: it runs before anything is built.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const stamp = join(root, 'dist', '.tsbuildinfo');

/** The newest modification time among the build's inputs. */
function newestInput() {
  let newest = 0;
  /** @param {string} path */
  const visit = (path) => {
    const info = statSync(path);
    if (info.isDirectory()) {
      for (const name of readdirSync(path)) visit(join(path, name));
    } else if (/\.(ts|json|html|css|svg)$/.test(path)) {
      newest = Math.max(newest, info.mtimeMs);
    }
  };
  for (const dir of ['apps', 'libs', 'scripts']) visit(join(root, dir));
  for (const file of ['tsconfig.json', 'tsconfig.build.json', 'package.json']) visit(join(root, file));
  return newest;
}

if (!existsSync(stamp) || newestInput() > statSync(stamp).mtimeMs) {
  process.stderr.write('building dist/ (sources changed since the last build)\n');
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  // The same steps as `npm run build`: the server, the console's modules, the console's static files.
  for (const args of [
    [tsc, '-p', join(root, 'tsconfig.build.json')],
    [tsc, '-p', join(root, 'apps', 'console', 'tsconfig.json')],
    [join(root, 'scripts', 'copy-console-assets.mjs')],
  ]) {
    const result = spawnSync(process.execPath, args, { stdio: 'inherit', cwd: root });
    if (result.status !== 0) process.exit(result.status ?? 1);
  }
  // An incremental build with nothing new for the server leaves its stamp old: mark this build.
  const now = new Date();
  utimesSync(stamp, now, now);
}
