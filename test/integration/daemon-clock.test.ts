// A daemon run in-process on a clock of the test's own (its `now` option): polls, alerts, digests
// and /healthz follow that clock; and a template edited into an invalid one is reported by the
// reload as file:line:column while the last good set keeps running.
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { readConfig } from '../../src/config.ts';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.ts';
import { createDaemon, type Daemon } from '../../src/service/daemon.ts';
import { createLogger } from '../../src/service/logger.ts';
import { listAlerts, openStore } from '../../src/store/index.ts';
import { getJson } from '../helpers/daemon.ts';
import { waitFor } from '../helpers/wait.ts';
import { tempDir } from '../helpers/files.ts';
import { TEMPLATES_DIR } from '../helpers/pipeline.ts';

let sandbox: Sandbox;
let daemon: Daemon | undefined;
let dir: string;

beforeEach(async () => {
  sandbox = await startSandbox({ port: 0, events: 10, kpis: 3 });
  dir = tempDir('edgewatch-clock-');
});

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

function configFor(rules: string, templatesDir = TEMPLATES_DIR) {
  const rulesDir = path.join(dir, 'rules');
  mkdirSync(rulesDir, { recursive: true });
  writeFileSync(path.join(rulesDir, 'rules.yaml'), rules);
  return readConfig({
    EDGEWATCH_API_URL: sandbox.url,
    EDGEWATCH_API_KEY: 'clock-key',
    EDGEWATCH_DB: path.join(dir, 'edgewatch.db'),
    EDGEWATCH_RULES: rulesDir,
    EDGEWATCH_TEMPLATES: templatesDir,
    EDGEWATCH_PORT: '0',
    // One poll at start and none after within the test: the clock alone moves.
    EDGEWATCH_POLL_EVENTS: '1h',
    EDGEWATCH_POLL_KPIS: '1h',
  });
}

const RULES = `channels:
  screen: { type: console }
rules:
  - name: new-events
    source: events
    trigger: { type: new }
    notify: [screen]
    digest: { window: 1h }
`;

it('polls, fires, sends digests and judges staleness by its `now` option', async () => {
  let clock = new Date('2030-01-01T00:00:00.000Z');
  const printed: string[] = [];
  const config = configFor(RULES);
  daemon = createDaemon({ config, logger: createLogger('silent'), out: (line) => printed.push(line), now: () => clock, deliveryIntervalMs: 100 });
  const { url } = await daemon.start();
  const baseline = await waitFor('the events baseline', async () => {
    const answer = await getJson(`${url}healthz`);
    return answer.body.sources.events.last_success_at !== null ? answer : undefined;
  });
  expect(baseline.body.sources.events.last_success_at).toBe('2030-01-01T00:00:00.000Z');
  expect(baseline.status).toBe(200);

  // A new event, seen by the poll at the next start, ten minutes later on the daemon's clock.
  const ticker = sandbox.world.addEvent();
  await daemon.stop();
  clock = new Date('2030-01-01T00:10:00.000Z');
  daemon = createDaemon({ config, logger: createLogger('silent'), out: (line) => printed.push(line), now: () => clock, deliveryIntervalMs: 100 });
  const second = await daemon.start();
  const store = await openStore(config.dbPath, { readonly: true });
  try {
    const [alert] = await waitFor('the alert stored', async () => {
      const alerts = await listAlerts(store, 5);
      return alerts.length > 0 ? alerts : undefined;
    });
    expect(alert).toMatchObject({ rule: 'new-events', entity: ticker, fired_at: '2030-01-01T00:10:00Z' });
    expect(alert!.deliveries).toEqual([{ channel: 'screen', status: 'digest', attempts: 0, last_error: null }]);

    // The batch's window is an hour of the daemon's clock: nothing goes before it has passed.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(printed).toEqual([]);
    clock = new Date('2030-01-01T01:10:00.000Z');
    await waitFor('the digest printed', () => printed.some((line) => line.includes('new-events')));
    expect((await listAlerts(store, 5))[0]!.deliveries).toEqual([{ channel: 'screen', status: 'delivered', attempts: 1, last_error: null }]);
  } finally {
    await store.close();
  }

  // No poll for three intervals (3 h) of the daemon's clock: stale, 503, at once.
  clock = new Date('2030-01-01T03:10:01.000Z');
  const stale = await getJson(`${second.url}healthz`);
  expect(stale.status).toBe(503);
  expect(stale.body.sources.events).toMatchObject({ stale: true, staleness_seconds: 3 * 3600 + 1 });
});

it('reports a template edited into an invalid one at file:line:column and keeps the last good set', async () => {
  const templatesDir = path.join(dir, 'templates');
  cpSync(TEMPLATES_DIR, templatesDir, { recursive: true });
  const config = configFor(RULES.replace('    digest: { window: 1h }\n', ''), templatesDir);
  daemon = createDaemon({ config, logger: createLogger('silent'), out: () => undefined, reloadDebounceMs: 50 });
  const { url } = await daemon.start();
  writeFileSync(path.join(templatesDir, 'edge.slack.liquid'), 'Edge\n  {{ alert.entity | no_such_filter }}');
  const failed = await waitFor('a failed reload', async () => {
    const answer = await getJson(`${url}healthz`);
    return answer.body.rules.last_reload?.ok === false ? answer : undefined;
  });
  expect(failed.body.rules.last_reload.problems).toEqual([`${path.join(templatesDir, 'edge.slack.liquid')}:2:3: undefined filter: no_such_filter`]);
  expect(failed.body.rules).toMatchObject({ rules: 1, ok: true });
});
