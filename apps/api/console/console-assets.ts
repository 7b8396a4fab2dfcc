import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

export interface ConsoleAsset {
  readonly body: Buffer;
  readonly contentType: string;
}

/** The directory holding package.json: dist/ lies beside it both in a checkout and in the image. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json not found above the api');
    dir = parent;
  }
  return dir;
}

/** The console's built files (`npm run build` → dist/console), read once: a few small files, served from memory. */
export class ConsoleAssets {
  private readonly files = new Map<string, ConsoleAsset>();

  constructor(directory = join(packageRoot(), 'dist', 'console')) {
    if (!existsSync(directory)) return;
    for (const name of readdirSync(directory)) {
      const contentType = CONTENT_TYPES[extname(name)];
      if (contentType !== undefined) this.files.set(name, { body: readFileSync(join(directory, name)), contentType });
    }
  }

  get built(): boolean {
    return this.files.has('index.html');
  }

  get(name: string): ConsoleAsset | undefined {
    return this.files.get(name);
  }
}
