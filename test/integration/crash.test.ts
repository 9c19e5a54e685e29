// Kill a polling process (SIGKILL) at many points; after restarting, the stored alerts equal those
// of an uninterrupted run, with no duplicates.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { openStore } from '../../src/store/index.ts';
import { alertKeys, deliveryKeys } from '../faults/harness.ts';
import { startSandboxWithRules, type SandboxWithRules } from '../helpers/cli.ts';
import { openSql } from '../helpers/sql.ts';

const CHILD = path.resolve(import.meta.dirname, '../helpers/poll-child.ts');
const RULES = `
channels:
  screen: { type: console }
  hook: { type: console }
rules:
  - name: edge-over-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, abs: true }
    notify: [screen, hook]
  - name: edge-moves
    source: events
    trigger: { type: moves, field: edge_pp, by: 1 }
    notify: [screen]
  - name: new-events
    source: events
    trigger: { type: new }
    notify: [hook]
  - name: edge-held
    source: events
    trigger: { type: crosses, field: edge_pp, above: 12, abs: true, rearm: 2 }
    for: 30m
    resolve: true
    notify: [screen, hook]
  - name: edge-resolves
    source: events
    trigger: { type: crosses, field: edge_pp, above: 6, abs: true, rearm: 1 }
    resolve: true
    notify: [hook]
`;

let scene: SandboxWithRules;
let sandbox: Sandbox;
let dir: string;
let rulesDir: string;

/** The polls' clock: an hour later each round, so that dwells started in one round complete in the next. */
let clock = '2026-11-21T00:00:00Z';

function runChild(db: string, killAfterMs?: number): Promise<{ killed: boolean; output: string; pollMs: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
      env: { ...process.env, CHILD_API_URL: sandbox.url, CHILD_DB: db, CHILD_RULES: rulesDir, CHILD_NOW: clock },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    let timer: NodeJS.Timeout | undefined;
    let readyAt = 0;
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      // Count from the moment the child is ready, so kills land inside the poll.
      if (readyAt === 0 && output.includes('ready')) {
        readyAt = performance.now();
        if (killAfterMs !== undefined) timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.on('error', reject);
    child.on('exit', (_code, signal) => {
      clearTimeout(timer);
      resolve({ killed: signal === 'SIGKILL', output, pollMs: performance.now() - readyAt });
    });
  });
}

async function storedAlerts(db: string): Promise<{ alerts: string[]; deliveries: string[]; resolutions: string[]; notices: string[]; timers: string[] }> {
  const store = await openStore(db);
  const sql = openSql(db);
  const keys = (query: string): string[] => sql.prepare<[], { key: string }>(query).all().map((row) => row.key);
  try {
    return {
      alerts: alertKeys(sql),
      deliveries: deliveryKeys(sql),
      resolutions: keys("SELECT r.id || ' ' || r.alert_id || ' ' || a.resolved_at AS key FROM resolutions r JOIN alerts a ON a.id = r.alert_id ORDER BY r.id"),
      notices: keys('SELECT id AS key FROM notices ORDER BY id'),
      timers: keys("SELECT rule || ' ' || entity_key || ' ' || due_at || ' ' || cause AS key FROM timers ORDER BY rule, entity_key"),
    };
  } finally {
    sql.close();
    await store.close();
  }
}

beforeAll(async () => {
  scene = await startSandboxWithRules({ rules: RULES, sandbox: { events: 2500, kpis: 10 } });
  ({ sandbox, dir, rulesDir } = scene);
});

afterAll(() => scene.close());

describe('crash safety', () => {
  it('stores the same alerts, once each, however often the poll is killed', { timeout: 240_000 }, async () => {
    const reference = path.join(dir, 'reference.db');
    const crashed = path.join(dir, 'crashed.db');
    for (const db of [reference, crashed]) expect((await runChild(db)).output).toMatch(/done 0 0/);

    // Rounds of movement; in each, the poll is killed at random points until one run completes.
    let kills = 0;
    for (let round = 1; round <= 5; round++) {
      clock = new Date(Date.parse('2026-11-21T00:00:00Z') + round * 3_600_000).toISOString();
      sandbox.advance(1);
      sandbox.world.eventTickers().forEach((ticker, i) => {
        if ((i + round) % 10 === 0) sandbox.world.updateEvent(ticker, { edge_pp: (i + round) % 20 === 0 ? 15 + (i % 7) : (i % 2 ? -1 : 1) * (i % 9) });
      });
      for (let i = 0; i < 5; i++) sandbox.world.addEvent();

      const referenceRun = await runChild(reference);
      expect(referenceRun.output).toMatch(/done \d+ 0/);
      for (let attempt = 0; attempt < 8; attempt++) {
        const result = await runChild(crashed, Math.random() * referenceRun.pollMs);
        if (!result.killed) break;
        kills++;
      }
      expect((await runChild(crashed)).output).toMatch(/done \d+ 0/);
    }

    const expected = await storedAlerts(reference);
    const actual = await storedAlerts(crashed);
    expect(kills).toBeGreaterThanOrEqual(10);
    expect(expected.alerts.length).toBeGreaterThan(500);
    expect(actual.alerts).toEqual(expected.alerts);
    expect(actual.deliveries).toEqual(expected.deliveries);
    // Dwell and resolution: the same alerts after a dwell, resolutions and their notices, timers.
    expect(expected.alerts.filter((key) => key.startsWith('edge-held ')).length).toBeGreaterThan(10);
    expect(expected.resolutions.length).toBeGreaterThan(5);
    expect(actual.resolutions).toEqual(expected.resolutions);
    expect(actual.notices).toEqual(expected.notices);
    expect(actual.timers).toEqual(expected.timers);
  });
});
