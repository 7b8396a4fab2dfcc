import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { DataSource } from 'typeorm';
import { call, listenApi, unique, type ListeningApi } from '../support/api.js';
import { describeInBrowser, launchChromium, PAGE_TIMEOUT_MS, pageErrors } from '../support/browser.js';
import { RpcClient, startController, type TestController } from '../support/controller.js';
import { callers, token, UNTRUSTED } from '../support/tokens.js';

/** The operator console (DESIGN 13) in headless Chromium, against the real api and controller. */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
/** `CONSOLE_SCREENSHOTS=1` rewrites docs/console/*.png from this run. */
const SCREENSHOTS = process.env.CONSOLE_SCREENSHOTS === '1';
/** Bounds the wait for a live update: the view changes only on the change stream (it never polls), so any bound proves it. */
const LIVE_MS = 10_000;

interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: readonly { target: readonly string[] }[];
}

describeInBrowser('the operator console in headless Chromium', () => {
  let api: ListeningApi;
  let controller: TestController;
  let browser: Browser;
  let operator: string;

  beforeAll(async () => {
    controller = await startController();
    api = await listenApi({ CONTROLLER_HOST_ID: controller.hostId });
    browser = await launchChromium();
    operator = await token({ sub: 'ops-alice', scope: 'portal.r portal.w portal.admin' });
  });

  afterAll(async () => {
    await browser?.close();
    await api?.close();
    await controller?.close();
  });

  /** A page signed in through the URL fragment, as `npm start` prints it, at the given view. */
  async function signedIn(view: string, jwt = operator, viewport = { width: 1280, height: 800 }): Promise<Page> {
    const page = await browser.newPage({ viewport });
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
    await page.goto(`${api.url}/console#token=${jwt}`);
    await page.getByRole('heading', { name: 'Tags', level: 1 }).waitFor();
    if (view !== 'Tags') await page.getByRole('link', { name: view }).click();
    await page.getByRole('heading', { name: view, level: 1 }).waitFor();
    return page;
  }

  async function expectAccessible(page: Page): Promise<void> {
    // Evaluated over the DevTools protocol, which the page's CSP (no inline script) does not govern.
    await page.evaluate(AXE_SOURCE);
    // Strings, not functions: this file is compiled without the DOM library.
    const violations = await page.evaluate<AxeViolation[]>('axe.run().then((result) => result.violations)');
    const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(serious.map((v) => `${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual(
      [],
    );
  }

  async function screenshot(page: Page, name: string): Promise<void> {
    if (SCREENSHOTS) await page.screenshot({ path: `docs/console/${name}.png`, fullPage: false });
  }

  it('is served with a strict CSP, no inline script and nothing from another origin', async () => {
    const index = await call(api, 'GET', '/console');
    expect(index.statusCode).toBe(200);
    expect(index.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(index.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toContain('unsafe');
    expect(index.body).not.toMatch(/<script>|<script [^>]*>[^<]/);
    expect(index.body).not.toMatch(/https?:\/\//);
    const module = await call(api, 'GET', '/console/main.js');
    expect(module.headers['content-type']).toBe('text/javascript; charset=utf-8');
    // The page names its icon, served from the console's files under the same CSP (no 404 in the browser).
    expect(index.body).toContain('<link rel="icon" href="/console/favicon.svg" type="image/svg+xml" />');
    const icon = await call(api, 'GET', '/console/favicon.svg');
    expect(icon.statusCode).toBe(200);
    expect(icon.headers['content-type']).toBe('image/svg+xml');
    expect(icon.headers['content-security-policy']).toBe(csp);
    expect(icon.body).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    const missing = await call(api, 'GET', '/console/nope.js');
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toContain('application/problem+json');
  });

  it('signs in from the URL fragment, removes the token from it, and signs in by pasting', async () => {
    const page = await signedIn('Tags');
    const errors = pageErrors(page);
    expect(page.url()).not.toContain('token=');
    expect(page.url()).toMatch(/\/console#\/tags$/);
    expect(await page.getByText('ops-alice').count()).toBe(1);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    await page.getByLabel('Bearer token').fill(operator);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Tags', level: 1 }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Tags', level: 1 }).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  it('asks before a link’s token replaces an active session, naming both subjects; keep is the default', async () => {
    const reader = await callers.reader('h-reader');
    const page = await signedIn('Tags');
    const errors = pageErrors(page);
    const views = () => page.getByRole('navigation', { name: 'Views' }).getByRole('link').allTextContents();
    const who = () => page.locator('#who span').textContent();
    const stored = () => page.evaluate('sessionStorage.getItem("bindery.token")');
    expect(await views()).toEqual(['Tags', 'Config', 'Instances', 'Events']);

    // A full page load of a link carrying another token, with this tab's session active: a question, not a switch.
    await page.goto('about:blank');
    await page.goto(`${api.url}/console#token=${reader}`);
    const question = page.getByRole('region', { name: 'Switch identity?' });
    await question.waitFor();
    expect(page.url()).toMatch(/\/console#\/tags$/);
    const text = (await question.textContent()) ?? '';
    expect(text).toContain('signed in as ops-alice');
    expect(text).toContain('a token for r-h-reader');
    expect(await who()).toMatch(/^ops-alice /);
    await expectAccessible(page);
    // Keep is focused: Enter declines, and the page goes on as ops-alice with the admin views.
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Tags', level: 1 }).waitFor();
    expect(await stored()).toBe(operator);
    expect(await views()).toEqual(['Tags', 'Config', 'Instances', 'Events']);
    expect(await who()).toMatch(/^ops-alice /);
    // An admin-only request still succeeds: the identity the page acts as is unchanged.
    await page.getByRole('link', { name: 'Instances' }).click();
    await page.getByText('Live', { exact: true }).waitFor();

    // The same link followed within the page (only the fragment changes): asked again; this time switch.
    await page.goto(`${api.url}/console#token=${reader}`);
    await question.waitFor();
    expect(page.url()).not.toContain('token=');
    await page.getByRole('button', { name: 'Switch to r-h-reader' }).click();
    await page.getByRole('heading', { name: 'Tags', level: 1 }).waitFor();
    expect(await stored()).toBe(reader);
    expect(await views()).toEqual(['Tags', 'Events']);
    expect(await who()).toMatch(/^r-h-reader, acting for host h-reader /);

    // A link carrying the token already in use asks nothing.
    await page.goto(`${api.url}/console#token=${reader}`);
    await page.getByRole('heading', { name: 'Tags', level: 1 }).waitFor();
    expect(await question.count()).toBe(0);
    expect(page.url()).not.toContain('token=');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('returns to sign-in, saying why, when the api ends the Instances stream because the token expired', async () => {
    // A clock tolerance of 1 s: the api ends the stream at exp + 1 s, when the token stops being accepted.
    const own = await listenApi({ CONTROLLER_HOST_ID: controller.hostId, JWT_CLOCK_TOLERANCE_SEC: '1' });
    const page = await browser.newPage();
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
    try {
      const brief = await token({ sub: 'ops-brief', scope: 'portal.admin' }, { expiresIn: 3 });
      await page.goto(`${own.url}/console#token=${brief}`);
      await page.getByRole('link', { name: 'Instances' }).click();
      await page.getByText('Live', { exact: true }).waitFor();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor({ timeout: 8000 });
      expect(await page.getByRole('alert').textContent()).toBe(
        'The api refused the token: The token has expired; sign in with a new one.',
      );
      expect(await page.evaluate('sessionStorage.length')).toBe(0);
    } finally {
      await page.close();
      await own.close();
    }
  }, 30_000);

  it('shows a refused token in words on the sign-in page', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
    const forged = await token({ sub: 'mallory', scope: 'portal.r' }, { key: UNTRUSTED });
    await page.goto(`${api.url}/console#token=${forged}`);
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/^The api refused the token: .+/);
    await page.close();
  });

  it('creates, finds, edits (a stale edit shows the 412 in words) and deletes a tag, with usage counts', async () => {
    const name = unique('console');
    const page = await signedIn('Tags');
    const errors = pageErrors(page);
    await page.getByRole('button', { name: 'New tag' }).click();
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByLabel('Description', { exact: true }).fill('made in the console');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByLabel('Search name or description').fill(name);
    await page.getByRole('button', { name: 'Search' }).click();
    const row = page.getByRole('row', { name: new RegExp(name) });
    await row.waitFor();
    expect(await row.textContent()).toContain('unused');

    // The database holds what the page wrote, as the operator.
    const listed = await call(api, 'GET', `/tags?tagName=${name}`, { token: operator });
    const created = listed.json<{ tags: { tagId: string; tagDesc: string; updateUser: string }[] }>().tags[0];
    expect(created).toMatchObject({ tagDesc: 'made in the console', updateUser: 'ops-alice' });
    const tagId = created?.tagId ?? '';

    // Usage: a schema tagged with it is counted after a refresh.
    const schemaId = unique('cs').replace(/-/g, '').slice(0, 22);
    expect(
      (await call(api, 'POST', '/schemas', { token: operator, body: { schemaId, schemaName: 'c', tagIds: [tagId] } }))
        .statusCode,
    ).toBe(201);
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('cell', { name: 'schema 1' }).waitFor();
    await page.getByRole('button', { name: `Entities of ${name}` }).click();
    await page.getByText(`schema ${schemaId}`).waitFor();

    // Someone else edits it meanwhile: saving the stale form shows the api's 412 detail.
    await page.getByRole('button', { name: `Edit ${name}` }).click();
    const other = await call(api, 'PUT', `/tags/${tagId}`, {
      token: operator,
      body: { tagName: name, tagDesc: 'changed elsewhere' },
    });
    expect(other.statusCode).toBe(200);
    await page.getByLabel('Description', { exact: true }).fill('my stale edit');
    await page.getByRole('button', { name: 'Save' }).click();
    const stale = page.getByRole('alert');
    await stale.waitFor();
    expect(await stale.textContent()).toMatch(/version/i);
    expect((await call(api, 'GET', `/tags/${tagId}`, { token: operator })).json()).toMatchObject({
      tagDesc: 'changed elsewhere',
    });

    // After a refresh the edit applies to the current version.
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('button', { name: `Edit ${name}` }).click();
    await page.getByLabel('Description', { exact: true }).fill('fixed in the console');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('cell', { name: 'fixed in the console' }).waitFor();

    // A duplicate name is refused with the api's words, not a blank page.
    await page.getByRole('button', { name: 'New tag' }).click();
    await page.getByLabel('Name', { exact: true }).fill(name.toUpperCase());
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/exists/i);
    await page.getByRole('button', { name: 'Cancel' }).click();

    await screenshot(page, 'tags');
    await expectAccessible(page);

    await page.getByRole('button', { name: `Delete ${name}` }).click();
    await page.getByText(`Delete the tag “${name}”?`).waitFor();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByText('No tags match.').waitFor();
    expect((await call(api, 'GET', `/tags/${tagId}`, { token: operator })).statusCode).toBe(404);
    expect(errors.filter((e) => !/status of (409|412)/.test(e))).toEqual([]);
    await page.close();
  }, 60_000);

  it('opens a config layer: the merged result names each key’s layer, and an edit saves with If-Match', async () => {
    const host = controller.hostId;
    const serviceId = unique('cfg');
    const layer = (envTag?: string): string =>
      `/config-server/admin/properties?host=${host}&serviceId=${serviceId}${envTag ? `&envTag=${envTag}` : ''}`;
    const put = (url: string, properties: Record<string, unknown>) =>
      call(api, 'PUT', url, { token: operator, body: { properties } });
    expect((await put(layer(), { 'server.port': 8080, 'server.name': 'base' })).statusCode).toBe(200);
    expect((await put(layer('prod'), { 'server.port': 8443 })).statusCode).toBe(200);
    const files = (kind: string, content: Record<string, string>) =>
      call(api, 'PUT', `/config-server/admin/files?host=${host}&serviceId=${serviceId}&envTag=prod&kind=${kind}`, {
        token: operator,
        body: { files: content },
      });
    const cert = Buffer.alloc(1500, 1).toString('base64');
    expect((await files('cert', { 'server.crt': cert })).statusCode).toBe(200);
    expect(
      (await files('file', { 'logback.xml': Buffer.from('<configuration/>\n').toString('base64') })).statusCode,
    ).toBe(200);

    const page = await signedIn('Config');
    await page.getByLabel('Host', { exact: true }).fill(host);
    await page.getByRole('button', { name: 'List layers' }).click();
    const summary = page.getByRole('row', { name: new RegExp(`service ${serviceId} · env prod`) });
    await summary.waitFor();
    expect(await summary.textContent()).toContain('1 property, 1 cert, 1 file');
    await page.getByRole('button', { name: `Open service ${serviceId} · env prod (host ${host})` }).click();
    const port = page.getByRole('row', { name: /server\.port/ });
    await port.waitFor();
    // The layer's certs and files by name and size, not only counted.
    const listing = page.getByRole('table', { name: 'This layer’s certs and files' });
    expect(await listing.getByRole('row').allTextContents()).toEqual([
      'KindNameSize',
      'Certserver.crt1.5 KiB',
      'Filelogback.xml17 bytes',
    ]);
    expect(await port.textContent()).toContain('8443');
    expect(await port.textContent()).toContain(`service ${serviceId} · env prod`);
    expect(await page.getByRole('row', { name: /server\.name/ }).textContent()).toContain(
      `service ${serviceId} · all environments`,
    );

    // A stale save shows the 412 in words; the layer keeps the other writer's value.
    expect((await put(layer('prod'), { 'server.port': 9000 })).statusCode).toBe(200);
    await page.getByLabel(/^Properties/).fill(JSON.stringify({ 'server.port': 9443 }));
    await page.getByRole('button', { name: 'Save layer' }).click();
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toMatch(/version|changed|match/i);
    const kept = await call(api, 'GET', layer('prod'), { token: operator });
    expect(kept.json<{ properties: unknown }>().properties).toEqual({ 'server.port': 9000 });

    // Reopened, the edit lands.
    await page.getByRole('button', { name: `Open service ${serviceId} · env prod (host ${host})` }).click();
    await page.getByRole('row', { name: /9000/ }).waitFor();
    await page.getByLabel(/^Properties/).fill(JSON.stringify({ 'server.port': 9443 }));
    await page.getByRole('button', { name: 'Save layer' }).click();
    await page.getByRole('row', { name: /9443/ }).waitFor();
    const saved = await call(api, 'GET', layer('prod'), { token: operator });
    expect(saved.json<{ properties: unknown }>().properties).toEqual({ 'server.port': 9443 });

    await screenshot(page, 'config');
    await expectAccessible(page);
    await page.close();
  }, 60_000);

  it('shows a layer’s history, the difference of a version, and rolls back after a confirmation', async () => {
    const host = controller.hostId;
    const serviceId = unique('hist');
    const url = `/config-server/admin/properties?host=${host}&serviceId=${serviceId}`;
    const put = (properties: Record<string, unknown>, reason: string) =>
      call(api, 'PUT', url, { token: operator, body: { properties }, headers: { 'x-change-reason': reason } });
    expect((await put({ 'app.mode': 'one', 'app.kept': true }, 'first cut')).statusCode).toBe(200);
    expect((await put({ 'app.mode': 'two', 'app.extra': 1, 'app.kept': true }, 'try two')).statusCode).toBe(200);

    const page = await signedIn('Config');
    await page.getByLabel('Host', { exact: true }).fill(host);
    await page.getByRole('button', { name: 'List layers' }).click();
    await page.getByRole('button', { name: `Open service ${serviceId} · all environments (host ${host})` }).click();
    await page.getByRole('button', { name: 'Show history' }).click();
    const versions = page.getByRole('table', { name: /versions, newest first/ });
    await versions.waitFor();
    const rows = await versions.getByRole('row').allTextContents();
    expect(rows).toHaveLength(3);
    expect(rows[1]).toContain('try two');
    expect(rows[1]).toContain('added app.extra; changed app.mode');
    expect(rows[2]).toContain('first cut');

    // Version 2 against version 1: names with their values before and after.
    await page.getByRole('button', { name: 'Difference of version 2' }).click();
    const diff = page.getByRole('table', { name: 'Version 2 against version 1' });
    await diff.waitFor();
    expect(await diff.getByRole('row').allTextContents()).toEqual([
      'NameChangeBeforeAfter',
      'app.extraadded—1',
      'app.modechanged"one""two"',
    ]);
    await expectAccessible(page);

    // Rollback asks first; confirmed, version 1's content is current as version 3, with the reason given.
    await page.getByRole('button', { name: 'Roll back to version 1' }).click();
    const confirm = page.getByRole('group', { name: 'Confirm rollback' });
    await confirm.waitFor();
    expect((await call(api, 'GET', url, { token: operator })).headers.etag).toBe('W/"2"');
    await confirm.getByLabel('Reason (optional)').fill('two broke the shop');
    await expectAccessible(page);
    await confirm.getByRole('button', { name: 'Roll back to version 1' }).click();
    await page.getByRole('table', { name: /^3 versions/ }).waitFor();
    const now = await call(api, 'GET', url, { token: operator });
    expect(now.headers.etag).toBe('W/"3"');
    expect(now.json<{ properties: unknown }>().properties).toEqual({ 'app.kept': true, 'app.mode': 'one' });
    const history = await call(api, 'GET', `/config-server/admin/history?host=${host}&serviceId=${serviceId}`, {
      token: operator,
    });
    expect(history.json<{ versions: { reason: string }[] }>().versions[0]?.reason).toBe('two broke the shop');
    await screenshot(page, 'config-history');
    await page.close();
  }, 60_000);

  it('shows an instance once it registers and drops it when its socket closes', async () => {
    const serviceId = unique('inst');
    const page = await signedIn('Instances');
    await page.getByText('Live', { exact: true }).waitFor();
    const jwt = await token({ sub: 'rt', sid: serviceId, host: controller.hostId, env: 'prod' });
    const runtime = await RpcClient.connect(controller.wsUrl, { token: jwt });
    const registered = await runtime.call('service/register', {
      serviceId,
      envTag: 'prod',
      version: '2.0.1',
      protocol: 'https',
      address: '10.0.0.7',
      port: 8443,
    });
    expect(registered.result).toMatchObject({ status: 'registered' });
    const row = page.getByRole('row', { name: new RegExp(serviceId) });
    await row.waitFor({ timeout: LIVE_MS });
    expect(await row.textContent()).toContain('https://10.0.0.7:8443');
    await screenshot(page, 'instances');
    await expectAccessible(page);

    runtime.socket.close();
    await row.waitFor({ state: 'detached', timeout: LIVE_MS });
    await page.close();
  }, 30_000);

  it('follows the change feed: a tag write appears in Events', async () => {
    const page = await signedIn('Events');
    await page.getByText('Live', { exact: true }).waitFor();
    const name = unique('feed');
    expect((await call(api, 'POST', '/tags', { token: operator, body: { tagName: name } })).statusCode).toBe(201);
    const row = page.getByRole('row', { name: new RegExp(name) });
    await row.waitFor({ timeout: 5000 });
    expect(await row.textContent()).toContain('ops-alice');
    await screenshot(page, 'events');
    await expectAccessible(page);
    await page.close();
  }, 30_000);

  it('shows each event as a line with tag and entity names, asking the api for tag ids the feed never named', async () => {
    const db = api.app.get(DataSource);
    const tag = async (tagName: string): Promise<string> => {
      const created = await call(api, 'POST', '/tags', { token: operator, body: { tagName } });
      expect(created.statusCode).toBe(201);
      return created.json<{ tagId: string }>().tagId;
    };
    const named = unique('ev-named');
    const fromApi = unique('ev-api');
    const gone = unique('ev-gone');
    const [namedId, apiId, goneId] = [await tag(named), await tag(fromApi), await tag(gone)];
    const schemaId = unique('evs').replace(/-/g, '').slice(0, 22);
    const schemaName = unique('pet');
    const body = { schemaId, schemaName, tagIds: [namedId, apiId, goneId] };
    expect((await call(api, 'POST', '/schemas', { token: operator, body })).statusCode).toBe(201);
    expect((await call(api, 'DELETE', `/tags/${goneId}`, { token: operator })).statusCode).toBe(204);
    // Two tags the feed no longer names (their own events pruned): one still exists, one was deleted.
    await db.query(`delete from change_event where type like 'tag.%' and data->>'tagId' = any($1)`, [[apiId, goneId]]);

    const page = await signedIn('Events');
    const errors = pageErrors(page);
    await page.getByText('Live', { exact: true }).waitFor();
    const tagged = page.getByRole('row', { name: new RegExp(`Tagged schema “${schemaName}”`) });
    await tagged.waitFor();
    await page
      .getByRole('row', { name: new RegExp(`“${fromApi}”`) })
      .first()
      .waitFor();
    const cells = await tagged.getByRole('cell').allTextContents();
    expect(cells.slice(2)).toEqual([
      'entity.tagged',
      'ops-alice',
      `Tagged schema “${schemaName}” with ${[namedId, apiId, goneId]
        .sort()
        .map((id) => ({ [namedId]: `“${named}”`, [apiId]: `“${fromApi}”`, [goneId]: `tag ${goneId}` })[id])
        .join(', ')}`,
    ]);
    expect(cells[1]).not.toBe('');
    expect(await page.getByRole('row', { name: new RegExp(`Created schema “${schemaName}”`) }).count()).toBe(1);
    expect(await page.getByRole('row', { name: new RegExp(`Created tag “${named}”`) }).count()).toBe(1);
    // The deleted tag's link removal: by id, the entity by the name an earlier event gave.
    expect(
      await page.getByRole('row', { name: new RegExp(`Removed tag ${goneId} from schema “${schemaName}”`) }).count(),
    ).toBe(1);
    // No raw JSON on the page.
    expect(await page.getByText('"tagIds"').count()).toBe(0);
    await expectAccessible(page);
    expect(errors.filter((e) => !/status of 404/.test(e))).toEqual([]);
    await page.close();
  }, 30_000);

  it('offers a token without portal.admin no admin view and a reader no write action', async () => {
    const page = await signedIn('Tags', await callers.reader('h-reader'));
    const views = await page.getByRole('navigation', { name: 'Views' }).getByRole('link').allTextContents();
    expect(views).toEqual(['Tags', 'Events']);
    expect(await page.getByRole('button', { name: 'New tag' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /^(Edit|Delete) / }).count()).toBe(0);
    // Going to an admin view by address shows the first allowed view instead.
    await page.goto(`${api.url}/console#/instances`);
    await page.getByRole('heading', { name: 'Tags', level: 1 }).waitFor();
    await expectAccessible(page);
    await page.close();
  });

  it('offers a capability-scoped token only what its capabilities allow, and names the host it acts for', async () => {
    const host = unique('hc');
    const mark = unique('cap');
    for (const [tagName, hostId] of [
      [`${mark}-global`, null],
      [`${mark}-own`, host],
    ] as const) {
      const created = await call(api, 'POST', '/tags', { token: operator, body: { tagName, hostId } });
      expect(created.statusCode).toBe(201);
    }
    const views = (page: Page) => page.getByRole('navigation', { name: 'Views' }).getByRole('link').allTextContents();
    const find = async (page: Page): Promise<void> => {
      await page.getByLabel('Search name or description').fill(mark);
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByRole('row', { name: new RegExp(`${mark}-global`) }).waitFor();
      await page.getByRole('row', { name: new RegExp(`${mark}-own`) }).waitFor();
    };

    // A read-only dashboard of one host (tags:read): Tags and Events, no write action, no Config or Instances.
    const dashboard = await signedIn('Tags', await token({ sub: 'dashboard', scope: 'tags:read', host }));
    const dashboardErrors = pageErrors(dashboard);
    expect(await views(dashboard)).toEqual(['Tags', 'Events']);
    expect(await dashboard.locator('#who span').textContent()).toBe(`dashboard, acting for host ${host} (tags:read)`);
    await find(dashboard);
    expect(await dashboard.getByRole('button', { name: 'New tag' }).count()).toBe(0);
    expect(await dashboard.getByRole('button', { name: /^(Edit|Delete) / }).count()).toBe(0);
    expect(await dashboard.getByRole('button', { name: `Entities of ${mark}-own` }).count()).toBe(1);
    await expectAccessible(dashboard);
    await dashboard.goto(`${api.url}/console#/config`);
    await dashboard.getByRole('heading', { name: 'Tags', level: 1 }).waitFor();
    expect(dashboardErrors).toEqual([]);
    await dashboard.close();

    // A CI job writing one host's tags (tags:write): edits that host's tags, not global ones; a new tag is its host's.
    const ci = await signedIn('Tags', await token({ sub: 'ci-job', scope: 'tags:write', host }));
    const ciErrors = pageErrors(ci);
    expect(await views(ci)).toEqual(['Tags', 'Events']);
    await find(ci);
    expect(await ci.getByRole('button', { name: `Edit ${mark}-own` }).count()).toBe(1);
    expect(await ci.getByRole('button', { name: `Delete ${mark}-own` }).count()).toBe(1);
    expect(await ci.getByRole('button', { name: `Edit ${mark}-global` }).count()).toBe(0);
    expect(await ci.getByRole('button', { name: `Delete ${mark}-global` }).count()).toBe(0);
    await ci.getByRole('button', { name: 'New tag' }).click();
    const hostField = ci.getByLabel('Host', { exact: true });
    expect(await hostField.inputValue()).toBe(host);
    expect(await hostField.isDisabled()).toBe(true);
    await ci.getByLabel('Name', { exact: true }).fill(`${mark}-ci`);
    await ci.getByRole('button', { name: 'Save' }).click();
    await ci.getByRole('row', { name: new RegExp(`${mark}-ci`) }).waitFor();
    const made = await call(api, 'GET', `/tags?tagName=${mark}-ci`, { token: operator });
    expect(made.json<{ tags: unknown[] }>().tags).toEqual([
      expect.objectContaining({ tagName: `${mark}-ci`, hostId: host, updateUser: 'ci-job' }),
    ]);
    expect(ciErrors).toEqual([]);
    await ci.close();

    // A host-bound config and registry operator without tags:read: Config (its host only) and Instances.
    const ops = await browser.newPage();
    ops.setDefaultTimeout(PAGE_TIMEOUT_MS);
    const opsErrors = pageErrors(ops);
    await ops.goto(
      `${api.url}/console#token=${await token({ sub: 'cfg-ops', scope: 'config:admin registry:read', host })}`,
    );
    await ops.getByRole('heading', { name: 'Config', level: 1 }).waitFor();
    expect(await views(ops)).toEqual(['Config', 'Instances']);
    const layerHost = ops.getByLabel('Host', { exact: true });
    expect(await layerHost.inputValue()).toBe(host);
    expect(await layerHost.getAttribute('readonly')).not.toBeNull();
    await ops.getByText('No config layers.').waitFor();
    expect(opsErrors).toEqual([]);
    await ops.close();

    // A runtime's token (config:read) allows no view: said in words.
    const runtime = await browser.newPage();
    runtime.setDefaultTimeout(PAGE_TIMEOUT_MS);
    await runtime.goto(
      `${api.url}/console#token=${await token({ sub: 'rt', scope: 'config:read', host, sid: 'svc' })}`,
    );
    await runtime.getByRole('heading', { name: 'Nothing to show', level: 1 }).waitFor();
    expect(await views(runtime)).toEqual([]);
    expect(await runtime.getByRole('alert').textContent()).toBe(
      "This token's scopes (config:read) allow no console view (the views need tags:read, config:admin or registry:read).",
    );
    await expectAccessible(runtime);
    await runtime.close();
  }, 60_000);

  it('works at a phone’s width: no sideways scrolling of the page', async () => {
    const page = await signedIn('Tags', operator, { width: 390, height: 844 });
    const overflow = await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    expect(overflow as number).toBeLessThanOrEqual(0);
    await expectAccessible(page);
    await page.close();
  });

  it('shows a reconnecting state, not a blank page, when the api goes away', async () => {
    const own = await listenApi({ CONTROLLER_HOST_ID: controller.hostId });
    const page = await browser.newPage();
    page.setDefaultTimeout(PAGE_TIMEOUT_MS);
    await page.goto(`${own.url}/console#token=${operator}`);
    await page.getByRole('link', { name: 'Instances' }).click();
    await page.getByText('Live', { exact: true }).waitFor();
    await own.close();
    await page.getByText('Connection lost — reconnecting…').waitFor();
    expect(await page.getByRole('heading', { name: 'Instances', level: 1 }).count()).toBe(1);
    await page.close();
  });
});
