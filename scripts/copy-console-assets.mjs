// The console's static files (HTML, CSS) next to its compiled modules in dist/console.
import { cpSync, mkdirSync } from 'node:fs';

mkdirSync('dist/console', { recursive: true });
cpSync('apps/console/public', 'dist/console', { recursive: true });
