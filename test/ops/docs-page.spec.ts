import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chromium, type Browser } from 'playwright-core';
import { listenApi, type ListeningApi } from '../support/api.js';

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
const PAGE_TIMEOUT_MS = 15_000;

const haveChromium = existsSync(CHROMIUM);
const missing = `${CHROMIUM} is missing: install Debian's chromium package (apt-get install -y chromium; .ci/run does)`;

if (!haveChromium && process.env.CI === 'true') {
  describe('the /docs page in headless Chromium', () => {
    it('needs Chromium in CI', () => {
      throw new Error(missing);
    });
  });
} else if (!haveChromium) {
  console.warn(`Skipping the /docs browser test: ${missing}`);
  describe.skip('the /docs page in headless Chromium (skipped: no Chromium)', () => {
    it('lists the operations', () => undefined);
  });
} else {
  describe('the /docs page in headless Chromium', () => {
    let api: ListeningApi;
    let browser: Browser;
    beforeAll(async () => {
      api = await listenApi();
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: PAGE_TIMEOUT_MS });
    });
    afterAll(async () => {
      await browser?.close();
      await api?.close();
    });

    it('renders Swagger UI listing the tags, entity and config-server operations, without console errors', async () => {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(`console: ${message.text()}`);
      });
      page.on('pageerror', (error) => errors.push(`page error: ${error.message}`));
      page.on('requestfailed', (request) => errors.push(`request failed: ${request.url()}`));

      const response = await page.goto(`${api.url}/docs`, { waitUntil: 'load', timeout: PAGE_TIMEOUT_MS });
      expect(response?.status()).toBe(200);
      // Swagger UI renders from the embedded document: wait until the operation rows are there.
      await page.waitForSelector('.opblock-summary-path', { timeout: PAGE_TIMEOUT_MS });

      const tags = await Promise.all(
        (await page.locator('.opblock-tag').all()).map((tag) => tag.getAttribute('data-tag')),
      );
      expect(tags).toEqual(
        expect.arrayContaining([
          'tags',
          'schemas',
          'products',
          'documents',
          'config-server',
          'config-server admin',
          'health',
          'metrics',
        ]),
      );
      const operations = await Promise.all(
        (await page.locator('.opblock').all()).map(async (block) => {
          const method = await block.locator('.opblock-summary-method').textContent();
          const path = await block.locator('.opblock-summary-path').getAttribute('data-path');
          return `${method?.trim().toUpperCase()} ${path}`;
        }),
      );
      expect(operations).toEqual(
        expect.arrayContaining([
          'POST /tags',
          'GET /tags',
          'GET /tags/{tagId}',
          'PUT /tags/{tagId}',
          'DELETE /tags/{tagId}',
          ...['schemas', 'products', 'documents'].flatMap((type) => [
            `POST /${type}`,
            `GET /${type}`,
            `GET /${type}/{id}`,
            `PUT /${type}/{id}`,
            `DELETE /${type}/{id}`,
            `GET /${type}/{id}/tags`,
            `PUT /${type}/{id}/tags`,
          ]),
          'GET /config-server/configs',
          'GET /config-server/certs',
          'GET /config-server/files',
          'PUT /config-server/admin/properties',
          'GET /config-server/admin/properties',
          'DELETE /config-server/admin/properties',
          'PUT /config-server/admin/files',
          'GET /config-server/admin/files',
          'DELETE /config-server/admin/files',
        ]),
      );
      // The bearer scheme is offered (the Authorize button) and the page title is the api's.
      expect(await page.locator('.btn.authorize').count()).toBe(1);
      expect(await page.locator('.info .title').textContent()).toContain('Bindery api');
      expect(errors).toEqual([]);
      await page.close();
    }, 30_000);
  });
}
