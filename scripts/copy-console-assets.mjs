// The console's static files (HTML, CSS, icon) next to its compiled modules in dist/console; the last step
// of `npm run build`, so it also marks the build current for build-if-stale.mjs.
import { cpSync, existsSync, mkdirSync, utimesSync } from 'node:fs';

mkdirSync('dist/console', { recursive: true });
cpSync('apps/console/public', 'dist/console', { recursive: true });
// An incremental tsc with nothing new leaves the stamp old, and a changed asset alone would then make every
// `npm start` rebuild: the build that just finished covers every input.
const stamp = 'dist/.tsbuildinfo';
if (existsSync(stamp)) {
  const now = new Date();
  utimesSync(stamp, now, now);
}
