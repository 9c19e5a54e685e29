// Bad rules, fuzzed, against the running daemon: every damaged save is reloaded and reported with
// its file and line, the daemon never crashes, and the last good rules keep firing.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { startSandboxWithRules, type SandboxWithRules } from '../helpers/cli.ts';
import { startDaemonChild, type DaemonChild } from '../helpers/daemon.ts';
import { waitFor } from '../helpers/wait.ts';
import { mulberry32 } from './harness.ts';
import { mutate } from './rule-mutations.ts';

const VALID = `channels:
  screen: { type: console }
rules:
  - name: new-events
    source: events
    trigger: { type: new }
    notify: [screen]
  - name: edge-over-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, abs: true, rearm: 2 }
    filter:
      confidence_score: { gte: 6 }
      series_category: [politics, economics]
    notify: [screen]
    cooldown: 1h
`;

let scene: SandboxWithRules;
let sandbox: Sandbox;
let daemon: DaemonChild | undefined;

beforeAll(async () => {
  scene = await startSandboxWithRules({ rules: VALID, dirPrefix: 'edgewatch-daemon-fuzz-' });
  sandbox = scene.sandbox;
});

afterAll(async () => {
  await daemon?.kill();
  await scene.close();
});

it('survives damaged rule files, reports each problem with file and line, and keeps firing', { timeout: 90_000 }, async () => {
  const file = path.join(scene.rulesDir, 'rules.yaml');
  daemon = await startDaemonChild({
    ...scene.env,
    EDGEWATCH_PORT: '0',
    EDGEWATCH_POLL_EVENTS: '1s',
    EDGEWATCH_POLL_KPIS: '1s',
  });
  const d = daemon;
  await d.waitForLog('the baseline poll', (line) => line.msg === 'started');
  const reloads = () => d.logs().filter((line) => line.reload !== undefined).length;

  const rng = mulberry32(20261122);
  let failed = 0;
  for (let round = 0; round < 12; round++) {
    const before = reloads();
    writeFileSync(file, mutate(VALID, rng));
    await waitFor(`reload ${round}`, () => reloads() > before, 10_000);
    expect(d.process.exitCode, d.stderr().slice(-2000)).toBeNull();

    const health = (await (await fetch(`${d.url}healthz`)).json()) as { rules: { last_reload: { ok: boolean; problems: string[] } } };
    const reload = health.rules.last_reload;
    if (!reload.ok) {
      failed++;
      expect(reload.problems.length).toBeGreaterThan(0);
      for (const problem of reload.problems) expect(problem).toMatch(/rules\.yaml:\d+:\d+: \S/);
    }
  }
  expect(failed).toBeGreaterThan(6);

  // The last good set kept running all along; a good save is taken up again.
  const before = reloads();
  writeFileSync(file, VALID);
  await waitFor('the good reload', () => reloads() > before, 10_000);
  const ticker = sandbox.world.addEvent();
  await waitFor('an alert for the new event', () => d.stdout().find((line) => line.includes(`new-events ${ticker}:`)), 15_000);
  const health = (await (await fetch(`${d.url}healthz`)).json()) as { rules: { last_reload: { ok: boolean } } };
  expect(health.rules.last_reload.ok).toBe(true);
});
