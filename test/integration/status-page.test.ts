// The status page in a real headless browser (Debian's chromium through playwright-core), served
// by a daemon run in-process against a sandbox whose world the test moves. Screenshots of the main
// page and of an entity's page are written to a temporary folder, whose path is printed.
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HistoryJson } from '../../src/service/api-types.ts';
import { getJson } from '../helpers/daemon.ts';
import { tempDir } from '../helpers/files.ts';
import { insertSilence, openStore } from '../../src/store/index.ts';
import { openSql } from '../helpers/sql.ts';
import { launchChromium, startStatusScene, type Chromium, type StatusScene } from '../helpers/status.ts';
import { waitFor } from '../helpers/wait.ts';

const HOSTILE = `Fed <script>window.__pwned = 1</script> <img src=x onerror="window.__pwned = 2"> & "co"`;

let scene: StatusScene;
let browser: Chromium;
let screenshots: string;
let t1: string, t2: string, t3: string;

/** Moves an event and waits until the daemon stored that snapshot. */
async function moveEvent(ticker: string, patch: Record<string, unknown>): Promise<void> {
  const before = await historyLength(ticker);
  scene.sandbox.world.updateEvent(ticker, patch);
  await waitFor(`${ticker} stored with ${JSON.stringify(patch)}`, async () => (await historyLength(ticker)) > before);
}

async function historyLength(ticker: string): Promise<number> {
  const { status, body } = await getJson(`${scene.url}api/entities/events/${ticker}/history?field=edge_pp`);
  return status === 200 ? (body as HistoryJson).points.length : 0;
}

beforeAll(async () => {
  scene = await startStatusScene(
    ([a, b, c]) => `channels:
  screen: { type: console }
rules:
  - name: edge-over-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, rearm: 2 }
    filter: { event_ticker: [${a}, ${b}] }
    notify: [screen]
    severity: warning
  - name: edge-jumps
    source: events
    trigger: { type: moves, field: edge_pp, by: 30, direction: up }
    filter: { event_ticker: ${c} }
    notify: [screen]
    severity: critical
`,
    (sandbox, tickers) => {
      for (const ticker of tickers.slice(0, 3)) sandbox.world.updateEvent(ticker, { edge_pp: 0 });
    },
  );
  [t1, t2, t3] = scene.tickers as [string, string, string];
  // t1 climbs, fires, falls back past the re-arm level, and fires again; t2 fires once under a hostile name; t3 jumps.
  for (const edge of [4, 15, 9, 7, 12]) await moveEvent(t1, { edge_pp: edge });
  await moveEvent(t2, { edge_pp: 20, name: HOSTILE });
  await moveEvent(t3, { edge_pp: 40 });
  await waitFor('four alerts printed', () => scene.printed.length >= 4);
  browser = await launchChromium();
  screenshots = tempDir('edgewatch-screenshots-');
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await scene?.close();
});

/** A new page that records console errors and uncaught exceptions. */
async function openPage(url: string, viewport = { width: 1400, height: 900 }): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.context.newPage();
  await page.setViewportSize(viewport);
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  const response = await page.goto(url);
  expect(response?.status()).toBe(200);
  await page.waitForSelector('body[data-loaded]');
  return { page, errors };
}

async function screenshot(page: Page, name: string): Promise<void> {
  const file = path.join(screenshots, name);
  await page.screenshot({ path: file, fullPage: true });
  console.log(`screenshot: ${file}`);
}

/** The page's globals the tests use (this program has no DOM library). */
interface BrowserWindow {
  getComputedStyle(element: unknown): { backgroundColor: string };
  scrollTo(x: number, y: number): void;
  scrollY: number;
}

/** A chart's container keeps its uPlot instance (web/charts.ts): what it draws, and where. */
interface ChartHolder {
  chart: { data: Array<Array<number | null>>; valToPos(value: number, scale: string): number };
}

async function chartDrawn(page: Page): Promise<void> {
  await page.locator('#chart .history-chart').waitFor();
  await page.waitForFunction(() => (globalThis as unknown as { document: { querySelector(s: string): ChartHolder | null } }).document.querySelector('#chart .history-chart')?.chart !== undefined);
}

const alertRules = (page: Page) => page.locator('#alert-list tbody tr').evaluateAll((rows) => rows.map((row) => row.children[2]!.textContent));

describe('the main page', () => {
  it('loads with no console error and shows sources, rules in words, and alerts by severity, with times on hover', async () => {
    const { page, errors } = await openPage(scene.url);
    const sources = await page.locator('#sources').innerText();
    for (const source of ['events', 'kpis', 'reports', 'runs']) expect(sources).toContain(source);
    expect(await page.locator('#sources tr[data-source="events"] .state').innerText()).toBe('ok');

    const rule = page.locator('#rules tr[data-rule="edge-over-10"]');
    expect(await rule.innerText()).toContain('edge_pp crosses above 10, re-arms at 8');
    expect(await rule.innerText()).toContain(`event_ticker in ${t1}, ${t2}`);
    expect(await rule.locator('.count').innerText()).toBe('3');
    expect(await rule.locator('.sparkline canvas').count()).toBe(1);
    const bars = await rule.locator('.sparkline').evaluate((el) => (el as unknown as ChartHolder).chart.data[1]!);
    expect(bars).toHaveLength(24);
    expect(bars.reduce((a: number, b) => a + (b ?? 0), 0)).toBe(3);

    expect(await alertRules(page)).toEqual(['edge-jumps', 'edge-over-10', 'edge-over-10', 'edge-over-10']);
    const critical = page.locator('#alert-list tr.sev-critical');
    expect(await critical.count()).toBe(1);
    expect(await page.locator('#alert-list tr.sev-warning').count()).toBe(3);
    // Colour by severity: the two rows differ in background.
    const background = (locator: ReturnType<Page['locator']>) => locator.first().evaluate((row) => (globalThis as unknown as BrowserWindow).getComputedStyle(row).backgroundColor);
    expect(await background(critical)).not.toBe(await background(page.locator('#alert-list tr.sev-warning')));
    await expect.poll(() => page.locator('#alert-list .delivery').first().innerText(), { timeout: 15_000 }).toBe('screen: delivered');

    const fired = critical.locator('time');
    expect(await fired.innerText()).toMatch(/^(just now|\d+ s ago)$/);
    expect(await fired.getAttribute('title')).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
    expect(await page.locator('#silences').innerText()).toContain('no active silences');
    await screenshot(page, 'status-page.png');
    expect(errors).toEqual([]);
  });

  it('sets a Content-Security-Policy that allows only its own scripts, and serves every file itself', async () => {
    const response = await fetch(scene.url);
    expect(response.headers.get('content-security-policy')).toMatch(/script-src 'self'[;]/);
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    const { page } = await openPage(scene.url);
    const sources = await page.locator('script[src], link[href]').evaluateAll((elements) => elements.map((el) => (el as unknown as { src?: string; href?: string }).src || (el as unknown as { href: string }).href));
    expect(sources.length).toBeGreaterThan(0);
    for (const url of sources) expect(url.startsWith(scene.url)).toBe(true);
    for (const asset of ['status-page.js', 'status-page.css', 'favicon.svg']) expect((await fetch(`${scene.url}assets/${asset}`)).status).toBe(200);
    expect((await fetch(`${scene.url}assets/..%2Fpackage.json`)).status).toBe(404);
  });

  it('narrows the alerts to one rule, keeps the filter in the address, and keeps scroll and filter across refreshes', async () => {
    const { page, errors } = await openPage(scene.url, { width: 1000, height: 400 });
    await page.selectOption('#filter-rule', 'edge-jumps');
    await expect.poll(() => alertRules(page)).toEqual(['edge-jumps']);
    expect(new URL(page.url()).searchParams.get('rule')).toBe('edge-jumps');
    await page.selectOption('#filter-severity', 'warning');
    await expect.poll(() => page.locator('#alert-list').innerText()).toContain('no alert matches these filters');
    await page.selectOption('#filter-severity', '');

    // A reload keeps the filter; the page's own refresh (every 10 s) keeps it and the scroll.
    await page.reload();
    await page.waitForSelector('body[data-loaded]');
    expect(await page.inputValue('#filter-rule')).toBe('edge-jumps');
    expect(await alertRules(page)).toEqual(['edge-jumps']);
    await page.evaluate(() => (globalThis as unknown as BrowserWindow).scrollTo(0, 300));
    const scrollY = () => page.evaluate(() => (globalThis as unknown as BrowserWindow).scrollY);
    const scrolled = await scrollY();
    expect(scrolled).toBeGreaterThan(100);
    const updated = await page.locator('#overall time').last().getAttribute('datetime');
    await expect.poll(() => page.locator('#overall time').last().getAttribute('datetime'), { timeout: 20_000 }).not.toBe(updated);
    expect(await scrollY()).toBe(scrolled);
    expect(await page.inputValue('#filter-rule')).toBe('edge-jumps');
    expect(await alertRules(page)).toEqual(['edge-jumps']);
    expect(errors).toEqual([]);
  }, 45_000);

  it('pages through the alerts, older and back', async () => {
    const { page, errors } = await openPage(`${scene.url}?rule=edge-over-10`);
    const all = await page.locator('#alert-list tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-alert')));
    expect(all).toHaveLength(3);
    // Two per page, through the API's cursor.
    await page.goto(`${scene.url}?rule=edge-over-10&limit=2`);
    await page.waitForSelector('body[data-loaded]');
    const ids = async () => page.locator('#alert-list tbody tr').evaluateAll((rows) => rows.map((row) => row.getAttribute('data-alert')));
    const first = await ids();
    expect(await page.locator('#page-older').count()).toBe(1);
    await page.click('#page-older');
    await expect.poll(ids).not.toEqual(first);
    expect([...first, ...(await ids())].filter((id, i, list) => list.indexOf(id) === i)).toEqual(all);
    await page.click('#page-newer');
    await expect.poll(ids).toEqual(first);
    expect(errors).toEqual([]);
  });
});

describe('the entity page', () => {
  it('charts the trigger field over the stored snapshots, with the threshold, the re-arm line and each firing linked to its alert', async () => {
    const { page, errors } = await openPage(`${scene.url}entities/events/${t1}?rule=edge-over-10`);
    await chartDrawn(page);
    const data = await page.locator('#chart .history-chart').evaluate((el) => (el as unknown as ChartHolder).chart.data);

    const sql = openSql(scene.dbPath);
    let stored: Array<{ seq: number; at: string; data: string }>;
    let fired: Array<{ id: string; seq: number }>;
    try {
      stored = sql
        .prepare<[string, string], { seq: number; at: string; data: string }>(
          `SELECT seq, stored_at AS at, data FROM snapshots WHERE source = 'events' AND entity_key = ?
           UNION ALL SELECT seq, updated_at AS at, data FROM entities WHERE source = 'events' AND entity_key = ? ORDER BY seq`,
        )
        .all(t1, t1);
      fired = sql.prepare<[string], { id: string; seq: number }>(`SELECT id, seq FROM alerts WHERE rule = 'edge-over-10' AND entity = ? ORDER BY seq`).all(t1);
    } finally {
      sql.close();
    }
    const [x, y, marks, threshold, rearm] = data as [number[], number[], Array<number | null>, number[], number[]];
    expect(x).toEqual(stored.map((row) => Date.parse(row.at) / 1000));
    expect(y).toEqual(stored.map((row) => (JSON.parse(row.data) as { edge_pp: number }).edge_pp));
    expect(y).toEqual([0, 4, 15, 9, 7, 12]);
    expect(fired).toHaveLength(2);
    const firedAt = new Set(fired.map((alert) => stored.findIndex((row) => row.seq === alert.seq)));
    expect(marks).toEqual(y.map((value, i) => (firedAt.has(i) ? value : null)));
    expect(new Set(threshold)).toEqual(new Set([10]));
    expect(new Set(rearm)).toEqual(new Set([8]));

    // Each firing is listed under its own anchor, which a click on its mark goes to.
    for (const alert of fired) expect(await page.locator(`#alert-${alert.id}`).count()).toBe(1);
    const box = (await page.locator('#chart .u-over').boundingBox())!;
    const last = await page.locator('#chart .history-chart').evaluate((el, i) => {
      const chart = (el as unknown as ChartHolder).chart;
      return { left: chart.valToPos(chart.data[0]![i]!, 'x'), top: chart.valToPos(chart.data[1]![i]!, 'y') };
    }, stored.length - 1);
    await page.mouse.click(box.x + last.left, box.y + last.top);
    await expect.poll(() => new URL(page.url()).hash).toBe(`#alert-${fired.at(-1)!.id}`);

    expect(await page.locator('#fields').innerText()).toContain('+12.0 pp');
    expect(await page.locator('#open-alerts').innerText()).toContain('edge-over-10');
    await screenshot(page, 'entity-page.png');
    expect(errors).toEqual([]);
  });

  it('is linked from each alert of the main page', async () => {
    const { page } = await openPage(`${scene.url}?rule=edge-jumps`);
    await page.click(`#alert-list a[href^="/entities/events/${t3}"]`);
    await page.waitForSelector('body[data-loaded]');
    expect(new URL(page.url()).pathname).toBe(`/entities/events/${t3}`);
    expect(await page.locator('#chart-rule').inputValue()).toBe('edge-jumps');
    await chartDrawn(page);
  });

  it('answers an unknown entity with the API error on the page', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${scene.url}entities/events/NOPE`);
    await expect.poll(() => page.locator('#refresh-error').innerText()).toContain('not_found: no entity "NOPE" in source "events"');
  });
});

it('shows text from the API as text, and runs none of it', async () => {
  for (const url of [scene.url, `${scene.url}entities/events/${t2}`]) {
    const { page, errors } = await openPage(url);
    await expect.poll(() => page.locator('main').innerText()).toContain(HOSTILE.replace(/\s+/g, ' '));
    expect(await page.locator('main script, main img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(errors).toEqual([]);
  }
});

it('lists an active silence with its matchers, author and comment, the comment as text', async () => {
  // As `silence add` stores it, while the daemon runs: the page's next refresh shows it.
  const store = await openStore(scene.dbPath);
  const now = new Date();
  await insertSilence(
    store,
    { id: 'silence-1', matchers: { rule: 'edge-*', entity: `${t1}` }, starts_at: now.toISOString(), ends_at: new Date(now.getTime() + 3_600_000).toISOString(), comment: `on it ${HOSTILE}`, created_by: 'ann' },
    now,
  );
  await store.close();
  const { page, errors } = await openPage(scene.url);
  const silences = await page.locator('#silences').innerText();
  expect(silences).toContain(`rule=edge-*, entity=${t1}`);
  expect(silences).toContain('ann');
  expect(silences.replace(/\s+/g, ' ')).toContain(`on it ${HOSTILE.replace(/\s+/g, ' ')}`);
  expect(await page.locator('#silences script, #silences img').count()).toBe(0);
  expect(errors).toEqual([]);
});
