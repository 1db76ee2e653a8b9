// The web console end to end (docs/console.md), in Debian's headless Chromium driven by playwright-core,
// against one real server: a tenant signs in, sees an entry put through the API, opens its heatmap,
// runs poisson_2d from the form and opens its output, cancels a running job; the operator creates a
// tenant and sees its key once. The key never leaves sessionStorage or this origin. Without
// /usr/bin/chromium (`apt-get install chromium`) the suite is skipped, and says so.
// Screenshots of each view go to $CONSOLE_SCREENSHOTS (default: a temp folder, printed).
import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { http, SERVICE_KEY, startServer, type TestServer } from '../helpers/server.js';
import { createTenant, tenantHeaders, type CreatedTenant } from '../helpers/tenants.js';
import { npyB64, smooth } from '../query/helpers.js';
import { CONSOLE_CSP } from '../../src/routes/console/routes.js';

// Globals of the page: the functions below that use them run in Chromium, not in Node.
declare const document: any, localStorage: any, sessionStorage: any;

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const GRID = 256;

describe('console: the web console served at /console, driven in headless Chromium', function () {
  this.timeout(120_000);
  let server: TestServer;
  let tenant: CreatedTenant;
  let browser: Browser;
  let page: Page;
  let shots: string;
  const requests: { url: string; headers: Record<string, string> }[] = [];

  const shot = (name: string) => page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });

  before(async function () {
    if (!existsSync(CHROMIUM)) {
      console.log(`    (skipped: no Chromium at ${CHROMIUM}; apt-get install -y chromium)`);
      this.skip();
    }
    shots = process.env.CONSOLE_SCREENSHOTS ?? (await mkdtemp(path.join(os.tmpdir(), 'ttstore-console-')));
    await mkdir(shots, { recursive: true });
    console.log(`    screenshots: ${shots}`);
    server = await startServer();
    tenant = await createTenant(server, { namespaces: ['default', 'lab'] });
    // Three smooth fields of one shape: one to open, two to come back as its neighbours.
    // And a cube, drawn a slice at a time.
    for (const [key, seed, shape] of [
      ['fields/wave', 1, [GRID, GRID]],
      ['fields/wave-2', 2, [GRID, GRID]],
      ['fields/wave-3', 5, [GRID, GRID]],
      ['cube', 3, [16, 32, 64]],
    ] as const) {
      const r = await http(server.url, 'POST', '/v1/put', {
        json: { key, data_b64: npyB64('float64', [...shape], smooth([...shape], seed)), metadata: { seed } },
        headers: tenantHeaders(tenant),
      });
      expect(r.status, r.text).to.equal(200);
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    page.on('request', (r) => requests.push({ url: r.url(), headers: r.headers() }));
  });

  after(async () => {
    await browser?.close();
    await server?.destroy();
  });

  it('opens the page under its self-only Content-Security-Policy', async () => {
    const res = await page.goto(`${server.url}/console`);
    expect(res!.status()).to.equal(200);
    expect(res!.headers()['content-security-policy']).to.equal(CONSOLE_CSP);
    await page.waitForSelector('[data-testid=signin]');
  });

  it('a wrong key is refused with the problem detail; the tenant key signs in and the entry is listed', async () => {
    await page.fill('#key', 'tts_not_a_key');
    await page.click('button[type=submit]');
    await page.waitForSelector('[role=alert]');
    expect(await page.textContent('[role=alert]')).to.match(/key/i);
    await shot('signin');
    await page.fill('#key', tenant.api_key);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=entries] >> text=fields/wave-3');
    await page.fill('input[name=prefix]', 'fields/wave-');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=entries] tbody tr').length === 2);
    await page.fill('input[name=prefix]', '');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=entries] tbody tr').length === 4);
    await shot('entries');
  });

  it("the namespace is picked from the key's own namespaces", async () => {
    const offered = await page.$$eval('select[name=namespace] option', (os) => os.map((o) => o.textContent));
    expect(offered).to.deep.equal(['default', 'lab']);
    await page.selectOption('select[name=namespace]', 'lab');
    await page.waitForSelector('text=No keys here yet.');
    await page.selectOption('select[name=namespace]', 'default');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=entries] tbody tr').length === 4);
  });

  it('the entry shows its facts, its ranks and a heatmap of the right size with non-uniform pixels', async () => {
    const serves = () => requests.filter((r) => r.url.endsWith('/v1/serve')).length;
    const servedBefore = serves();
    await page.click('[data-testid=entries] a:text-is("fields/wave")');
    await page.waitForSelector('[data-testid=entry-facts] >> text=Compression ratio');
    await page.waitForSelector('canvas[data-testid=ranks]');
    const heatmap = await page.waitForSelector('canvas[data-testid=heatmap]');
    const drawn = await heatmap.evaluate((c: any) => {
      const px = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      const colours = new Set<number>();
      for (let i = 0; i < px.length; i += 4) colours.add((px[i] << 16) | (px[i + 1] << 8) | px[i + 2]);
      return { width: c.width, height: c.height, colours: colours.size };
    });
    expect(drawn).to.include({ width: GRID, height: GRID });
    expect(drawn.colours, 'distinct colours in the heatmap').to.be.greaterThan(50);
    expect(serves() - servedBefore, 'one read of a part per picture').to.equal(1);
    await page.click('button:text-is("Find similar")');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=neighbours] canvas[data-testid=thumb]').length === 2);
    expect(await page.textContent('[data-testid=neighbours]'))
      .to.match(/fields\/wave-2/)
      .and.match(/score/);
    await shot('entry');
  });

  it('a 3-D entry is drawn as a slice, its index chosen with a slider', async () => {
    await page.click('nav >> text=Entries');
    await page.click('[data-testid=entries] a:text-is("cube")');
    const size = () => page.$eval('canvas[data-testid=heatmap]', (c: any) => [c.width, c.height, c.toDataURL()]);
    await page.waitForSelector('canvas[data-testid=heatmap]');
    const [w, h, before] = await size();
    expect([w, h], 'the last two axes, across axis 0').to.deep.equal([64, 32]);
    await page.fill('.slider input[type=range]', '2');
    await page.waitForSelector('.slider >> text=index 2');
    await page.waitForFunction((was) => document.querySelector('canvas[data-testid=heatmap]').toDataURL() !== was, before);
    await page.selectOption('.picture select', '2');
    await page.waitForFunction(() => document.querySelector('canvas[data-testid=heatmap]').width === 32);
  });

  it('a poisson_2d job submitted from the form completes, and its output opens as a picture', async () => {
    await page.click('nav >> text=Simulations');
    await page.waitForSelector('[data-testid=submit-form] #param-n_bits');
    expect(await page.getAttribute('#param-n_bits', 'min')).to.equal('9');
    expect(await page.getAttribute('#param-n_bits', 'max')).to.equal('14');
    await page.fill('#param-n_bits', '9');
    await page.click('[data-testid=submit-form] button[type=submit]');
    await page.waitForSelector('li[data-testid=job][data-status=completed]', { timeout: 90_000 });
    await shot('jobs');
    await page.click('li[data-testid=job] button:text-is("poisson_2d/u")');
    const heatmap = await page.waitForSelector('canvas[data-testid=heatmap]');
    // 512 x 512 interior points, read one level coarser to fit 256 cells.
    expect(await heatmap.evaluate((c: any) => [c.width, c.height])).to.deep.equal([256, 256]);
    await shot('output');
  });

  it('a running job is cancelled from its row', async () => {
    await page.click('nav >> text=Simulations');
    await page.selectOption('select[name=solver]', 'navier_stokes_2d');
    await page.fill('#param-reynolds', '100');
    await page.fill('#param-steps', '1000000');
    await page.fill('#param-dt', '0.0001');
    await page.fill('input[name=output_key_prefix]', 'long');
    // What was typed into the new solver's fields stays (its starting values come with its fields).
    expect(await page.inputValue('#param-reynolds')).to.equal('100');
    await page.click('[data-testid=submit-form] button[type=submit]');
    const row = 'li[data-testid=job][data-status=running]';
    try {
      await page.waitForSelector(row, { timeout: 60_000 });
    } catch (err) {
      // What the page and the service showed, for a run where the job never showed as running.
      await shot('cancel-timeout');
      const list = await http(server.url, 'GET', '/v1/simulation/list', { headers: tenantHeaders(tenant) });
      console.log(`    jobs at the timeout: ${list.text}`);
      throw err;
    }
    await page.click(`${row} button:text-is("Cancel")`);
    await page.waitForSelector('li[data-testid=job][data-status=failed] >> text=cancelled', { timeout: 30_000 });
  });

  it('the tenant key is held in sessionStorage only: no localStorage, no cookie', async () => {
    const kept = await page.evaluate(() => ({
      local: Object.keys(localStorage).length,
      cookie: document.cookie,
      session: Object.values(sessionStorage),
    }));
    expect(kept.local).to.equal(0);
    expect(kept.cookie).to.equal('');
    expect(kept.session).to.include(tenant.api_key);
    expect(await page.context().cookies()).to.deep.equal([]);
  });

  it("the tenant's usage shows its CU by operation (the four puts) and its stored bytes against the quotas", async () => {
    await page.click('nav >> text=Usage');
    const put = await page.waitForSelector('[data-testid=own-usage] tr[data-op=put]');
    expect(await put.textContent()).to.match(/^put4\b/);
    const own = (await page.textContent('[data-testid=own-usage]'))!;
    expect(own).to.include(tenant.tenant_id).and.include('Stored bytes');
    expect(await page.$$('[data-testid=own-usage] meter')).to.have.length.greaterThan(8);
    await shot('own-usage');
  });

  it('the operator signs in, creates a tenant and sees its key once; usage and health show', async () => {
    await page.click('button:text-is("Sign out")');
    expect(await page.evaluate(() => sessionStorage.length)).to.equal(0);
    await page.check('input[value=operator]');
    await page.fill('#key', SERVICE_KEY);
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=tenants]');
    await page.fill('input[name=tenant_id]', 'console-made');
    await page.click('[data-testid=create-tenant] button[type=submit]');
    const key = (await (await page.waitForSelector('[data-testid=api-key]')).textContent())!;
    expect(key).to.match(/^tts_[A-Za-z0-9_-]{43}$/);
    await page.waitForSelector('[data-testid=tenants] >> text=console-made');
    await shot('tenants');
    await page.click('button:text-is("I have copied it")');
    expect(await page.content()).not.to.include(key);
    const listed = await http(server.url, 'GET', '/v1/list/default', { headers: { 'X-Api-Key': key } });
    expect(listed.status, 'the key shown works').to.equal(200);
    await page.click('nav >> text=Usage');
    await page.click(`[data-testid=usage] button:text-is("${tenant.tenant_id}")`);
    await page.waitForSelector('[data-testid=tenant-usage] >> text=simulation');
    await shot('usage');
    await page.click('nav >> text=Health');
    await page.waitForSelector('[data-testid=metrics] >> text=HTTP requests');
    await shot('health');
  });

  it('no request went to another origin, and every request that carried a key went to this one', () => {
    const origin = new URL(server.url).origin;
    const elsewhere = requests.filter((r) => !r.url.startsWith('data:') && new URL(r.url).origin !== origin);
    expect(elsewhere.map((r) => r.url)).to.deep.equal([]);
    const keyed = requests.filter((r) => r.headers['x-api-key'] || r.headers.authorization);
    expect(keyed.length).to.be.greaterThan(10);
  });
});
