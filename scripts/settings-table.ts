import { readFileSync, writeFileSync } from 'node:fs';
import { format, resolveConfig } from 'prettier';
import { SETTINGS_CATALOG, settingsTable } from '../libs/platform/settings-catalog.js';
import { parseCommandLine } from './usage.js';

/**
 * `npm run docs:settings`: writes the settings table of docs/deploy.md from `SETTINGS_CATALOG`, between its
 * `settings:begin` and `settings:end` markers, formatted as `npm run lint` checks it.
 */
export const DEPLOY_DOC = 'docs/deploy.md';
const BLOCK = /(<!-- settings:begin[^>]*-->\n)[\s\S]*?(\n<!-- settings:end -->)/;

parseCommandLine({
  name: 'docs:settings',
  usage: `usage: npm run docs:settings
Writes the settings table of docs/deploy.md (between its settings:begin and settings:end markers) from
SETTINGS_CATALOG in libs/platform/settings-catalog.ts, formatted as npm run lint checks it.`,
  options: {},
});

const text = readFileSync(DEPLOY_DOC, 'utf8');
if (!BLOCK.test(text)) throw new Error(`${DEPLOY_DOC} has no settings:begin / settings:end markers`);
const updated = text.replace(BLOCK, (_, begin: string, end: string) => `${begin}\n${settingsTable()}\n${end}`);
const options = { ...(await resolveConfig(DEPLOY_DOC)), filepath: DEPLOY_DOC };
writeFileSync(DEPLOY_DOC, await format(updated, options));
console.log(`${DEPLOY_DOC}: ${SETTINGS_CATALOG.length} settings`);
