// `edgewatch run` in a child process against a sandbox with a manual clock (nothing moves unless
// the test moves it) and a local webhook receiver.
import { spawn } from 'node:child_process';
import { rmSync, watch, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { BIN, REPO, startSandboxWithRules, type SandboxWithRules } from '../helpers/cli.ts';
import { childEnv, eventsBaselineDone, getJson, getText, metricValue, startDaemonChild, type DaemonChild } from '../helpers/daemon.ts';
import { answer, holdOpen, startWebhookReceiver, type WebhookReceiver, type WebhookRequest } from '../helpers/receivers.ts';
import { waitFor } from '../helpers/wait.ts';

const API_KEY = 'daemon-test-key';

let scene: SandboxWithRules;
let sandbox: Sandbox;
let receiver: WebhookReceiver;
let rulesDir: string;
let children: DaemonChild[];
let tickers: string[];

function edgeRule(extra = ''): string {
  return `
channels:
  hook: { type: webhook, url: "${receiver.url}" }
rules:
  - name: edge-over-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, abs: true }
    filter: { event_ticker: [${tickers.join(', ')}] }
    notify: [hook]
${extra}`;
}

async function startDaemon(env: Record<string, string> = {}): Promise<DaemonChild> {
  const child = await startDaemonChild({
    ...scene.env,
    EDGEWATCH_PORT: '0',
    EDGEWATCH_POLL_EVENTS: '1s',
    EDGEWATCH_POLL_KPIS: '1s',
    EDGEWATCH_POLL_REPORTS: '1s',
    EDGEWATCH_POLL_RUNS: '1s',
    EDGEWATCH_DELIVERY_ATTEMPTS: '3',
    ...env,
  });
  children.push(child);
  return child;
}

/** Whether a TCP connection to host:port is accepted ('connected') or the error code it fails with. */
function tryConnect(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

const alertFor = (rule: string, entity: string) => (r: WebhookRequest) => r.json().rule === rule && r.json().entity === entity;

beforeEach(async () => {
  scene = await startSandboxWithRules({ sandbox: { apiKey: API_KEY, events: 20, kpis: 5 }, dirPrefix: 'edgewatch-daemon-' });
  ({ sandbox, rulesDir } = scene);
  receiver = await startWebhookReceiver();
  children = [];
  tickers = sandbox.world.eventTickers().slice(0, 3);
  // Armed to start with: each crossing below is a real crossing.
  for (const ticker of tickers) sandbox.world.updateEvent(ticker, { edge_pp: 0 });
});

afterEach(async () => {
  for (const child of children) await child.kill();
  await receiver.close();
  await scene.close();
});

describe('edgewatch run', () => {
  it('delivers an alert, counts it in /metrics, and /healthz turns 503 once the API is gone for three intervals', async () => {
    writeFileSync(path.join(rulesDir, 'rules.yaml'), edgeRule());
    const daemon = await startDaemon();
    expect(daemon.logs().some((l) => l.msg.includes(sandbox.url))).toBe(true);
    expect(daemon.stderr()).not.toContain(API_KEY);
    await eventsBaselineDone(daemon.url);

    sandbox.world.updateEvent(tickers[0]!, { edge_pp: 15 });
    const request = await receiver.waitFor('edge-over-10', alertFor('edge-over-10', tickers[0]!));
    expect(request.headers['webhook-id']).toBe(request.json().id);
    expect(request.json()).toMatchObject({ type: 'alert', source: 'events', trigger: 'crosses' });

    const metrics = await waitFor('the delivery counted', async () => {
      const { text } = await getText(`${daemon.url}metrics`);
      return metricValue(text, 'edgewatch_deliveries_total{channel="hook",outcome="delivered"}') === 1 ? text : undefined;
    });
    expect(metricValue(metrics, 'edgewatch_alerts_fired_total{rule="edge-over-10"}')).toBe(1);
    expect(metricValue(metrics, 'edgewatch_polls_total{source="events"}')).toBeGreaterThanOrEqual(2);
    expect(metricValue(metrics, 'edgewatch_outbox_depth')).toBe(0);
    expect(metrics).toContain('edgewatch_api_request_duration_seconds_bucket');
    expect(metrics).toContain('edgewatch_delivery_duration_seconds_bucket{le="0.01",channel="hook"}');
    expect(metrics).toContain('edgewatch_digest_batches_pending 0');

    // Retried: on a loaded machine a 1 s poller can briefly lag three intervals.
    const healthy = await waitFor('200', async () => {
      const answer = await getJson(`${daemon.url}healthz`);
      return answer.status === 200 ? answer : undefined;
    });
    expect(healthy.body).toMatchObject({ status: 'ok', rules: { ok: true, failed_at_start: false, rules: 1 } });
    // No reports rule and no run processing: nothing to poll there, and never stale.
    expect(healthy.body.sources.reports).toMatchObject({ idle: true, stale: false });

    await sandbox.close();
    const unhealthy = await waitFor('503', async () => {
      const answer = await getJson(`${daemon.url}healthz`);
      return answer.status === 503 && answer.body.sources.events.last_error ? answer : undefined;
    });
    // Stale means no good poll for more than three (1 s) intervals.
    expect(unhealthy.body.sources.events).toMatchObject({ stale: true, interval_seconds: 1 });
    expect(unhealthy.body.sources.events.staleness_seconds).toBeGreaterThanOrEqual(3);
    expect(unhealthy.body.sources.reports.stale).toBe(false);
    expect(unhealthy.body.reasons.join(' ')).toContain('events');
  }, 60_000);

  it('runs the valid rules when some fail at start, keeps the last good set on a bad edit, and picks up a new rule', async () => {
    writeFileSync(path.join(rulesDir, 'rules.yaml'), edgeRule());
    writeFileSync(path.join(rulesDir, 'extra.yaml'), 'rules:\n  - name: broken\n    source: events\n    trigger: { type: crosses, field: edge_pp, abvoe: 3 }\n    notify: [hook]\n');
    const daemon = await startDaemon();
    await daemon.waitForLog('the problem at start', (l) => /extra\.yaml:\d+:\d+: /.test(l.msg));
    const atStart = await getJson(`${daemon.url}healthz`);
    expect(atStart.status).toBe(503);
    expect(atStart.body.rules).toMatchObject({ failed_at_start: true, rules: 1 });
    expect(atStart.body.rules.problems[0]).toMatch(/extra\.yaml:\d+:\d+: /);
    await eventsBaselineDone(daemon.url);

    // The valid part runs.
    sandbox.world.updateEvent(tickers[0]!, { edge_pp: 15 });
    await receiver.waitFor('edge-over-10 despite the broken file', alertFor('edge-over-10', tickers[0]!));

    // Fixed: the reload clears the start failure.
    rmSync(path.join(rulesDir, 'extra.yaml'));
    const fixed = await waitFor('a good reload', async () => {
      const answer = await getJson(`${daemon.url}healthz`);
      return answer.body.rules.last_reload?.ok === true ? answer : undefined;
    });
    expect(fixed.body.rules.failed_at_start).toBe(false);
    expect(fixed.body.reasons).not.toContain('rules failed to load at start');

    // Edited to be invalid: reported (log and /healthz), the old rules keep firing.
    writeFileSync(path.join(rulesDir, 'rules.yaml'), edgeRule().replace('above: 10', 'above: ten'));
    const failed = await waitFor('a failed reload', async () => {
      const answer = await getJson(`${daemon.url}healthz`);
      return answer.body.rules.last_reload?.ok === false ? answer : undefined;
    });
    expect(failed.body.rules.last_reload.problems[0]).toMatch(/rules\.yaml:\d+:\d+: .*above/);
    expect(failed.body.rules.rules).toBe(1);
    expect(failed.body.rules.failed_at_start).toBe(false);
    expect(failed.body.reasons).not.toContain('rules failed to load at start');
    await daemon.waitForLog('the reload problem', (l) => /rules\.yaml:\d+:\d+: /.test(l.msg));
    await daemon.waitForLog('the failed reload', (l) => l.reload === 'failed');
    sandbox.world.updateEvent(tickers[1]!, { edge_pp: -20 });
    await receiver.waitFor('edge-over-10 from the last good set', alertFor('edge-over-10', tickers[1]!));

    // A new valid rule takes effect without a restart.
    writeFileSync(
      path.join(rulesDir, 'rules.yaml'),
      edgeRule(`  - name: edge-moves-3
    source: events
    trigger: { type: moves, field: edge_pp, by: 3 }
    filter: { event_ticker: ${tickers[2]} }
    notify: [hook]
`),
    );
    await waitFor('the new rule loaded', async () => (await getJson(`${daemon.url}healthz`)).body.rules.rules === 2);
    await daemon.waitForLog('the good reload', (l) => l.reload === 'ok' && l.rules === 2);
    sandbox.world.updateEvent(tickers[2]!, { edge_pp: 5 });
    await receiver.waitFor('the new rule firing', alertFor('edge-moves-3', tickers[2]!));
    expect(receiver.requests.filter((r) => r.json().entity === tickers[2])).toHaveLength(1);
  }, 60_000);

  it('polls the market-search sources every EDGEWATCH_POLL_MARKETS and delivers an edge crossing of a watched ticker', async () => {
    const watched = sandbox.world.eventTickers().find((t) => sandbox.world.eventVenue(t) === 'venuea')!;
    sandbox.world.updateEvent(watched, { edge_pp: 0 });
    sandbox.world.refreshMarkets();
    writeFileSync(
      path.join(rulesDir, 'rules.yaml'),
      `channels:\n  hook: { type: webhook, url: "${receiver.url}" }\nwatchlists: { mine: [${watched}] }\nrules:\n` +
        '  - { name: my-edge, source: edge, watchlist: mine, trigger: { type: crosses, field: edge_pp, above: 10 }, notify: [hook] }\n',
    );
    const daemon = await startDaemon({ EDGEWATCH_POLL_MARKETS: '1s' });
    const baseline = await waitFor('the watchlist baseline', async () => {
      const answer = await getJson(`${daemon.url}healthz`);
      return answer.body.sources.edge?.last_success_at ? answer : undefined;
    });
    expect(baseline.body.sources.edge).toMatchObject({ interval_seconds: 1, idle: false });
    expect(baseline.body.sources.rankings).toMatchObject({ interval_seconds: 1, idle: true });

    sandbox.advance(1);
    sandbox.world.updateEvent(watched, { edge_pp: 15 });
    sandbox.world.refreshMarkets();
    const request = await receiver.waitFor('my-edge', alertFor('my-edge', watched));
    expect(request.json()).toMatchObject({ type: 'alert', source: 'edge', trigger: 'crosses', current: { input_ticker: watched, edge_pp: 15 } });
  }, 60_000);

  it('warns at start when the API key is missing, logs the 401 as an error naming EDGEWATCH_API_KEY, and /healthz answers 503 at once', async () => {
    writeFileSync(path.join(rulesDir, 'rules.yaml'), edgeRule());
    // Long intervals: only the key, not staleness, can make /healthz 503 here.
    const daemon = await startDaemon({ EDGEWATCH_API_KEY: '', EDGEWATCH_POLL_EVENTS: '1h', EDGEWATCH_POLL_KPIS: '1h', EDGEWATCH_POLL_REPORTS: '1h', EDGEWATCH_POLL_RUNS: '1h' });
    const warning = daemon.logs().find((l) => l.msg.includes('EDGEWATCH_API_KEY is not set'));
    expect(warning?.level).toBe(40);
    const refused = await daemon.waitForLog('the refused key', (l) => l.source === 'events' && /failed/.test(l.msg));
    expect(refused.level).toBe(50);
    expect(refused.msg).toBe('poll of events failed: the API refused the key (HTTP 401): check EDGEWATCH_API_KEY');
    const health = await getJson(`${daemon.url}healthz`);
    expect(health.status).toBe(503);
    expect(health.body.sources.events).toMatchObject({ key_refused: true, stale: false });
    expect(health.body.reasons).toContain('source events: the API refused the key (HTTP 401): check EDGEWATCH_API_KEY');
    // The client gives up at once on a refused key: one request per poll.
    expect(sandbox.requests.filter((r) => r.path === '/v1/predictions/events')).toHaveLength(1);
  }, 60_000);

  it('logs how many fired alerts wait for a digest', async () => {
    writeFileSync(
      path.join(rulesDir, 'rules.yaml'),
      edgeRule(`  - name: edge-over-10-daily
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, abs: true }
    filter: { event_ticker: [${tickers.join(', ')}] }
    notify: [hook]
    digest: { window: 1h }
`),
    );
    const daemon = await startDaemon();
    await eventsBaselineDone(daemon.url);
    sandbox.world.updateEvent(tickers[0]!, { edge_pp: 15 });
    const line = await daemon.waitForLog('the fired count', (l) => / alert\(s\) fired/.test(l.msg));
    expect(line.msg).toBe('2 alert(s) fired (1 waiting for a digest)');
    expect(line).toMatchObject({ alerts: 2, waiting_for_digest: 1 });
    // The immediate one is sent; the digested one waits for its window.
    await receiver.waitFor('edge-over-10', alertFor('edge-over-10', tickers[0]!));
    expect(receiver.requests.filter((r) => r.json().rule === 'edge-over-10-daily')).toEqual([]);
  }, 60_000);

  it('exits 0 within 10 s on SIGTERM while a delivery is held, and the next start completes it with the same id', async () => {
    writeFileSync(path.join(rulesDir, 'rules.yaml'), edgeRule());
    receiver.reply = holdOpen;
    const first = await startDaemon();
    await eventsBaselineDone(first.url);
    sandbox.world.updateEvent(tickers[0]!, { edge_pp: 15 });
    const held = await receiver.waitFor('the held delivery', alertFor('edge-over-10', tickers[0]!));

    const stop = await first.signal('SIGTERM');
    expect(stop.code).toBe(0);
    expect(stop.ms).toBeLessThan(10_000);
    expect(first.logs().some((l) => l.msg === 'stopped')).toBe(true);

    receiver.reply = answer(200);
    const second = await startDaemon();
    const again = await receiver.waitFor('the delivery again', (r) => r !== held && r.headers['webhook-id'] === held.headers['webhook-id']);
    expect(again.json()).toEqual(held.json());
    await waitFor('the delivery counted', async () =>
      metricValue((await getText(`${second.url}metrics`)).text, 'edgewatch_deliveries_total{channel="hook",outcome="delivered"}') === 1,
    );
    const stopAgain = await second.signal('SIGTERM');
    expect(stopAgain.code).toBe(0);
    // One alert, sent twice (at least once, same id), and no second alert after the restart.
    expect(new Set(receiver.requests.map((r) => r.json().id)).size).toBe(1);
  }, 60_000);

  it('exits 0 on a SIGTERM that arrives while it is still starting', async () => {
    writeFileSync(path.join(rulesDir, 'rules.yaml'), edgeRule());
    const dbPath = path.join(scene.dir, 'starting.db');
    const env = childEnv({ ...scene.env, EDGEWATCH_DB: dbPath, EDGEWATCH_PORT: '0' });
    // The database file appears while the daemon opens it, before it has migrated and started.
    const dbCreated = new Promise<void>((resolve) => {
      const watcher = watch(scene.dir, (_event, name) => {
        if (name !== path.basename(dbPath)) return;
        watcher.close();
        resolve();
      });
    });
    const child = spawn(process.execPath, [BIN, 'run'], { cwd: REPO, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    await dbCreated;
    child.kill('SIGTERM');
    expect(await exit).toEqual({ code: 0, signal: null });
    expect(stderr).toContain('"msg":"stopped"');
  });

  // The HTTP server has no authentication: it must not be reachable from other machines unless asked.
  // Linux routes all of 127.0.0.0/8 to the loopback interface, so 127.0.0.2 stands for "another address".
  it('binds 127.0.0.1 unless EDGEWATCH_HOST says otherwise, and logs the address it bound', async () => {
    writeFileSync(path.join(rulesDir, 'rules.yaml'), edgeRule());
    const daemon = await startDaemon();
    expect(daemon.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    await eventsBaselineDone(daemon.url); // answers on the address it logged
    expect(await tryConnect('127.0.0.2', Number(new URL(daemon.url).port))).toBe('ECONNREFUSED');
  });

  it('binds every interface with EDGEWATCH_HOST=0.0.0.0 and logs that address', async () => {
    writeFileSync(path.join(rulesDir, 'rules.yaml'), edgeRule());
    const daemon = await startDaemon({ EDGEWATCH_HOST: '0.0.0.0' });
    expect(daemon.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+\/$/);
    expect(await tryConnect('127.0.0.2', Number(new URL(daemon.url).port))).toBe('connected');
  });

  it('logs a warning naming a misspelt EDGEWATCH_ variable and the one it resembles, and runs on', async () => {
    writeFileSync(path.join(rulesDir, 'rules.yaml'), edgeRule());
    const daemon = await startDaemon({ EDGEWATCH_POLL_EVNETS: '5s' });
    const warning = await daemon.waitForLog('the unknown variable', (l) => l.msg.startsWith('unknown variable'));
    expect(warning.msg).toBe('unknown variable EDGEWATCH_POLL_EVNETS, did you mean EDGEWATCH_POLL_EVENTS?');
    expect(warning.level).toBe(40);
    await eventsBaselineDone(daemon.url);
  });
});
