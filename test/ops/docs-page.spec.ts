import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { Browser } from 'playwright-core';
import { DOCS_CSP } from '#platform';
import { listenApi, type ListeningApi } from '../support/api.js';
import { describeInBrowser, launchChromium, PAGE_TIMEOUT_MS, pageErrors } from '../support/browser.js';

describeInBrowser('the /docs page in headless Chromium', () => {
  let api: ListeningApi;
  let browser: Browser;
  beforeAll(async () => {
    api = await listenApi();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  it('renders Swagger UI listing the tags, entity and config-server operations, without console errors', async () => {
    const page = await browser.newPage();
    const errors = pageErrors(page);

    const response = await page.goto(`${api.url}/docs`, { waitUntil: 'load', timeout: PAGE_TIMEOUT_MS });
    expect(response?.status()).toBe(200);
    // Under its CSP: a script, style or image the policy refused would be a console error below.
    expect(response?.headers()['content-security-policy']).toBe(DOCS_CSP);
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
