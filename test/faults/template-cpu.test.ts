// A template that burns CPU on every real alert, against the running daemon: each render is cut
// short by its time limit and the delivery is dead at once, so /healthz keeps answering within
// 2 s, the rule's webhook is delivered, and SIGTERM stops the daemon promptly.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { startSandboxWithRules, type SandboxWithRules } from '../helpers/cli.ts';
import { eventsBaselineDone, startDaemonChild, type DaemonChild } from '../helpers/daemon.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/receivers.ts';
import { waitFor } from '../helpers/wait.ts';

// Heavy only on real alerts: the sample alert that loading renders takes the other branch (a
// template heavy on every alert is refused by validate and at start).
const BURNER = "{% if alert.rule != 'sample-rule' %}\n{% for i in (1..3000) %}{% for j in (1..3000) %}x{% endfor %}{% endfor %}{% endif %}";
const ALERTS = 25;

let scene: SandboxWithRules;
let sandbox: Sandbox;
let receiver: WebhookReceiver;
let dir: string;
let daemon: DaemonChild | undefined;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  scene = await startSandboxWithRules({
    sandbox: { apiKey: 'cpu', events: 10, kpis: 2 },
    dirPrefix: 'edgewatch-template-cpu-',
    rules: `channels:
  screen: { type: console }
  hook: { type: webhook, url: "${receiver.url}" }
rules:
  - name: new-events
    source: events
    trigger: { type: new }
    template: burn
    notify: [screen, hook]
`,
  });
  ({ sandbox, dir } = scene);
  mkdirSync(path.join(dir, 'templates'));
  writeFileSync(path.join(dir, 'templates', 'burn.text.liquid'), BURNER);
});

afterAll(async () => {
  await daemon?.kill();
  await receiver.close();
  await scene.close();
});

/** How long /healthz took to answer, in ms (a hung answer counts as 10 s). */
async function healthzMs(url: string): Promise<number> {
  const started = Date.now();
  try {
    const response = await fetch(`${url}healthz`, { signal: AbortSignal.timeout(10_000) });
    await response.text();
  } catch {
    return 10_000;
  }
  return Date.now() - started;
}

it('keeps /healthz answering within 2 s while deliveries fail on a CPU-burning template', { timeout: 120_000 }, async () => {
  const d = (daemon = await startDaemonChild({
    ...scene.env,
    EDGEWATCH_TEMPLATES: path.join(dir, 'templates'),
    EDGEWATCH_PORT: '0',
    EDGEWATCH_POLL_EVENTS: '1s',
    EDGEWATCH_POLL_KPIS: '1s',
  }));
  await d.waitForLog('the baseline poll', (line) => line.msg === 'polled' || line.msg === 'started');
  await eventsBaselineDone(d.url);

  const tickers = Array.from({ length: ALERTS }, () => sandbox.world.addEvent());
  const dead = () => d.logs().filter((line) => line.channel === 'screen' && line.outcome === 'dead');
  const slowest: number[] = [];
  await waitFor(
    `${ALERTS} dead console deliveries`,
    async () => {
      slowest.push(await healthzMs(d.url));
      return dead().length >= ALERTS;
    },
    60_000,
  );
  // Probed all along the failing renders (each probe waits 100 ms after the previous answer).
  expect(slowest.length).toBeGreaterThan(5);
  expect(Math.max(...slowest)).toBeLessThan(2_000);

  // Each dead at its first attempt, with the template's place; nothing printed; webhooks all went.
  for (const line of dead()) expect(String(line.error)).toMatch(/^template .*burn\.text\.liquid:\d+:\d+: template render limit exceeded$/);
  expect(d.stdout().filter((line) => line.includes('new-events'))).toEqual([]);
  await waitFor('every webhook', () => tickers.every((t) => receiver.requests.some((r) => r.json().entity === t)), 15_000);
  expect(d.logs().filter((line) => line.channel === 'screen' && line.outcome === 'retrying')).toEqual([]);

  // A stop while another batch burns is prompt.
  for (let i = 0; i < ALERTS; i++) sandbox.world.addEvent();
  await waitFor('the next batch failing', () => dead().length > ALERTS, 30_000);
  const stop = await d.signal('SIGTERM');
  expect(stop.code).toBe(0);
  expect(stop.ms).toBeLessThan(10_000);
});
