// The status page in a real headless browser (Debian's chromium through playwright-core), served
// by a daemon run in-process against a sandbox with a manual clock.
import { chromium, type Browser } from 'playwright-core';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { readConfig } from '../../src/config.ts';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { createDaemon, type Daemon } from '../../src/service/daemon.ts';
import { createLogger } from '../../src/service/logger.ts';
import { insertSilence, openStore } from '../../src/store/index.ts';
import { startSandboxWithRules, type SandboxWithRules } from '../helpers/cli.ts';
import { eventsBaselineDone } from '../helpers/daemon.ts';
import { writeRules } from '../helpers/files.ts';
import { TEMPLATES_DIR } from '../helpers/pipeline.ts';
import { waitFor } from '../helpers/wait.ts';

const SCRIPT = '<script>window.__pwned = 1</script>';

let scene: SandboxWithRules;
let sandbox: Sandbox;
let daemon: Daemon | undefined;
let browser: Browser | undefined;

beforeEach(async () => {
  scene = await startSandboxWithRules({ sandbox: { events: 10, kpis: 3 }, dirPrefix: 'edgewatch-status-' });
  sandbox = scene.sandbox;
});

afterEach(async () => {
  await browser?.close();
  await daemon?.stop();
  await scene.close();
});

it('shows sources, rules, active silences and recent alerts, with API text as text', async () => {
  const [ticker] = sandbox.world.eventTickers();
  sandbox.world.updateEvent(ticker!, { edge_pp: 0 });
  writeRules(
    scene.dir,
    `channels:
  screen: { type: console }
rules:
  - name: edge-over-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10 }
    filter: { event_ticker: ${ticker} }
    notify: [screen]
`,
  );
  const printed: string[] = [];
  const config = readConfig({
    ...scene.env,
    EDGEWATCH_TEMPLATES: TEMPLATES_DIR,
    EDGEWATCH_PORT: '0',
    EDGEWATCH_POLL_EVENTS: '1s',
    EDGEWATCH_POLL_KPIS: '1s',
  });
  daemon = createDaemon({ config, logger: createLogger('silent'), out: (line) => printed.push(line) });
  const { url } = await daemon.start();
  await eventsBaselineDone(url);

  // An active silence, as `silence add` stores it: listed on the page, its comment as text.
  const store = await openStore(scene.dbPath);
  const now = new Date();
  await insertSilence(
    store,
    { id: 'silence-1', matchers: { rule: 'kpi-*' }, starts_at: now.toISOString(), ends_at: new Date(now.getTime() + 3_600_000).toISOString(), comment: `on it ${SCRIPT}`, created_by: 'ann' },
    now,
  );
  await store.close();

  sandbox.world.updateEvent(ticker!, { edge_pp: 15, name: `Fed ${SCRIPT} & "co"` });
  await waitFor('the alert printed', () => printed.some((line) => line.includes('edge-over-10')));

  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = await browser.newPage();
  const response = await page.goto(url);
  expect(response?.status()).toBe(200);

  const sources = await page.locator('#sources').innerText();
  for (const source of ['events', 'kpis', 'reports', 'runs']) expect(sources).toContain(source);
  const rules = await page.locator('#rules').innerText();
  expect(rules).toContain('edge-over-10');
  expect(rules).toContain('crosses');
  expect(rules).not.toMatch(/edge-over-10\s+events\s+crosses\s+screen\s+never/);

  const silences = await page.locator('#silences').innerText();
  expect(silences).toContain('silence-1');
  expect(silences).toContain('rule=kpi-*');
  expect(silences).toContain(`on it ${SCRIPT}`);
  expect(silences).toContain('ann');

  const alerts = page.locator('#alerts');
  await expect.poll(() => alerts.innerText()).toContain(`Fed ${SCRIPT} & "co"`);
  expect(await alerts.innerText()).toContain('screen: delivered (1)');
  expect(await alerts.getByText(SCRIPT).count()).toBeGreaterThan(0);
  expect(await page.locator('script').count()).toBe(0);
  expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
}, 60_000);
