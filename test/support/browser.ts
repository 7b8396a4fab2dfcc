import { existsSync } from 'node:fs';
import { describe, it } from '@jest/globals';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's `chromium` package (installed by .ci/run); Playwright's own browser downloads are never used. */
const CHROMIUM = '/usr/bin/chromium';
/** No network here but the package registries: without these Chromium waits on connections it cannot make. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
export const PAGE_TIMEOUT_MS = 15_000;

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: PAGE_TIMEOUT_MS });
}

/**
 * `describe` when Chromium is installed; in CI a missing Chromium fails, elsewhere the suite is skipped
 * with a warning saying how to install it.
 */
export function describeInBrowser(name: string, body: () => void): void {
  const missing = `${CHROMIUM} is missing: install Debian's chromium package (apt-get install -y chromium; .ci/run does)`;
  if (existsSync(CHROMIUM)) {
    describe(name, body);
  } else if (process.env.CI === 'true') {
    describe(name, () => {
      it('needs Chromium in CI', () => {
        throw new Error(missing);
      });
    });
  } else {
    console.warn(`Skipping "${name}": ${missing}`);
    describe.skip(`${name} (skipped: no Chromium)`, () => {
      it('runs in a browser', () => undefined);
    });
  }
}

/** Collects console errors, page errors and failed requests, which a healthy page has none of. */
export function pageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
  page.on('requestfailed', (request) => {
    // A request the page itself aborted (leaving a view, reloading) is not a failure.
    if (request.failure()?.errorText !== 'net::ERR_ABORTED') errors.push(`request failed: ${request.url()}`);
  });
  return errors;
}
