// The demo's pace: the built-in sandbox world (its default seed and size) at the built-in speed,
// polled on the built-in schedule with the example rules through the real pipeline. The clock is
// driven directly (sandbox.advance), so five real minutes of the demo take a few seconds here.
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createApiClient, type ApiClient } from '../../src/api/index.ts';
import { SOURCES, type SourceName } from '../../src/core/types.ts';
import { CREDENTIAL_VARIABLES } from '../../src/config.ts';
import { loadTemplates } from '../../src/render/index.ts';
import { loadRules } from '../../src/rules/index.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { BUILT_IN_SANDBOX_SPEED, dataClock } from '../../src/service/app.ts';
import { pollSources } from '../../src/service/cycle.ts';
import { SANDBOX_POLL_INTERVALS } from '../../src/service/daemon.ts';
import { startGeneration } from '../../src/service/generate.ts';
import { openStore, type Store } from '../../src/store/index.ts';
import { REPO } from '../helpers/cli.ts';
import { tempDir } from '../helpers/files.ts';

const MINUTES = 5;
/** The market-search sources whose example rules show within the demo's first minutes. */
const EARLY_SOURCES: SourceName[] = ['edge', 'rankings'];
const EARLY_MINUTES = 3;
/** "A few": no real minute above this, and this many at most on average. */
const MAX_PER_MINUTE = 6;
const MAX_MEAN_PER_MINUTE = 4;
const TICK_MS = 5_000;

let sandbox: Sandbox | undefined;
let api: ApiClient | undefined;
let store: Store | undefined;
afterEach(async () => {
  await api?.close();
  await sandbox?.close();
  await store?.close();
});

it(`fires every trigger type of the example rules within ${MINUTES} real minutes, edge and rankings ones within ${EARLY_MINUTES}, a few alerts a minute`, async () => {
  const templates = await loadTemplates(path.join(REPO, 'templates'));
  const { rules, problems } = await loadRules(path.join(REPO, 'rules'), { env: {}, credentials: CREDENTIAL_VARIABLES, templates: templates.names(), transports: { slack: false, email: false } });
  expect(problems).toEqual([]);
  // As `npm start` starts it, but with a clock that only this test moves.
  sandbox = await startSandbox({ port: 0 });
  // No retries: this clock stands still while a request waits, so a market-search sync (503) would
  // outlast every retry; the daemon's moving clock ends it within a second, and the next poll reads it.
  api = createApiClient({ baseUrl: sandbox.url, apiKey: 'demo', retries: 0 });
  store = await openStore(path.join(tempDir('edgewatch-pace-'), 'edgewatch.db'));
  const realStart = Date.parse('2026-11-23T09:00:00Z');

  /** alerts[minute][rule] */
  const perMinute: Array<Record<string, number>> = Array.from({ length: MINUTES }, () => ({}));
  const triggersFired = new Set<string>();
  /** The real minute (1-based) of each source's first alert. */
  const firstBySource = new Map<SourceName, number>();
  for (let t = 0; t < MINUTES * 60_000; t += TICK_MS) {
    const now = new Date(realStart + t);
    // The researcher tries `edgewatch generate` once the demo runs.
    if (t === 60_000) await startOpenGeneration(store, api, sandbox, now);
    const due = SOURCES.filter((source: SourceName) => t % SANDBOX_POLL_INTERVALS[source] === 0);
    // The rules judge time (dwell, due dates) by the sandbox world's clock, as the daemon does.
    const report = await pollSources({ store, api, rules, now: dataClock({ sandbox }, () => now), reportsBudget: 50, sources: due });
    expect(report.failures).toEqual([]);
    for (const alert of report.alerts) {
      const minute = perMinute[Math.floor(t / 60_000)]!;
      minute[alert.rule] = (minute[alert.rule] ?? 0) + 1;
      triggersFired.add(alert.trigger);
      if (!firstBySource.has(alert.source)) firstBySource.set(alert.source, Math.floor(t / 60_000) + 1);
    }
    sandbox.advance((BUILT_IN_SANDBOX_SPEED * TICK_MS) / 1000);
  }

  const table = perMinute.map((minute, i) => `minute ${i + 1}: ${JSON.stringify(minute)}`).join('\n');
  expect([...triggersFired].sort(), table).toEqual([...new Set(rules.map((rule) => rule.trigger.type))].sort());
  // Every source has an example rule; the edge and rankings ones show early.
  expect([...new Set(rules.map((rule) => rule.source))].sort(), table).toEqual([...SOURCES].sort());
  for (const source of EARLY_SOURCES) expect(firstBySource.get(source), `${source}\n${table}`).toBeLessThanOrEqual(EARLY_MINUTES);
  const totals = perMinute.map((minute) => Object.values(minute).reduce((a, b) => a + b, 0));
  expect(Math.max(...totals), table).toBeLessThanOrEqual(MAX_PER_MINUTE);
  expect(totals.reduce((a, b) => a + b, 0) / MINUTES, table).toBeLessThanOrEqual(MAX_MEAN_PER_MINUTE);
});

/** Starts a generation on the first event whose market is open, as `edgewatch generate` would. */
async function startOpenGeneration(store: Store, api: ApiClient, sandbox: Sandbox, now: Date): Promise<void> {
  for (const ticker of sandbox.world.eventTickers()) {
    try {
      await startGeneration(store, api, sandbox.world.eventVenue(ticker), sandbox.world.eventKey(ticker), now);
      return;
    } catch {
      // market not open: try the next event
    }
  }
  throw new Error('no open market in the sandbox');
}
