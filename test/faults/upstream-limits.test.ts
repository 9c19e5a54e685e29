// A hostile upstream that never stops sending: a page chain that never ends (a fresh cursor and
// fresh rows on every page), a page far larger than any real one, and a row nested deeper than
// any real one. Each time `poll --once` (the real command, on a real SQLite file) ends the events
// poll with an error naming the list and the limit, exits 1, and still delivers the alerts of the
// other sources to a real webhook receiver.
import { afterEach, describe, expect, it } from 'vitest';
import type { Fault, Sandbox } from '../../src/sandbox/index.ts';
import { runCli, startSandboxWithRules, type CliResult } from '../helpers/cli.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/receivers.ts';

const KEY = 'limits-key';
const EVENTS_PATH = '/v1/predictions/events';

const rules = (hookUrl: string) => `
channels:
  hook: { type: webhook, url: "${hookUrl}" }
rules:
  - name: edge-over-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, abs: true }
    notify: [hook]
  - name: kpi-actual
    source: kpis
    trigger: { type: appears, field: actual }
    notify: [hook]
`;

interface Scene {
  sandbox: Sandbox;
  receiver: WebhookReceiver;
  env: Record<string, string>;
}

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const close of cleanup) await close();
  cleanup = [];
});

/** A sandbox, a webhook receiver and a database with its baseline poll done. */
async function baselined(limits: Record<string, string>): Promise<Scene> {
  const receiver = await startWebhookReceiver();
  cleanup.push(receiver.close);
  const started = await startSandboxWithRules({ sandbox: { apiKey: KEY, seed: 11, events: 40, kpis: 20 }, rules: rules(receiver.url), dirPrefix: 'edgewatch-limits-' });
  cleanup.push(started.close);
  const scene: Scene = { sandbox: started.sandbox, receiver, env: { ...started.env, ...limits } };
  const baseline = await runCli(['poll', '--once'], scene.env);
  expect(baseline.stderr).toMatch(/^edgewatch poll: first poll of events, kpis: a baseline/);
  expect(baseline.code).toBe(0);
  return scene;
}

/** KPI actuals land (alerts for the other source), the events list turns hostile, and one poll runs. */
async function hostilePoll(scene: Scene, fault: Omit<Fault, 'path'>): Promise<{ result: CliResult; eventRequests: number; kpiAlerts: string[] }> {
  const { sandbox, receiver } = scene;
  const landed = sandbox.world.kpiIds().slice(0, 3);
  landed.forEach((id, i) => sandbox.world.landActual(id, 100 + i));
  sandbox.requests.length = 0;
  sandbox.inject({ path: EVENTS_PATH, method: 'GET', ...fault });
  const result = await runCli(['poll', '--once'], scene.env, { timeoutMs: 120_000 });
  const eventRequests = sandbox.requests.filter((r) => r.path === EVENTS_PATH).length;
  const kpiAlerts = receiver.requests.map((r) => r.json()).map((a) => `${String(a.rule)} ${String(a.entity)}`);
  expect(kpiAlerts.sort()).toEqual(landed.map((id) => `kpi-actual ${id}`).sort());
  return { result, eventRequests, kpiAlerts };
}

/** A real row of the sandbox's events list, to copy into hostile pages. */
async function eventRow(sandbox: Sandbox): Promise<Record<string, unknown>> {
  const response = await fetch(`${sandbox.url}/predictions/events?limit=1&include=eligibility`, { headers: { authorization: `Bearer ${KEY}` } });
  const body = (await response.json()) as { data: Array<Record<string, unknown>> };
  sandbox.requests.length = 0;
  return body.data[0]!;
}

describe('upstream limits', () => {
  it('ends a page chain that never ends at EDGEWATCH_MAX_PAGES and delivers the other sources', { timeout: 180_000 }, async () => {
    const scene = await baselined({ EDGEWATCH_MAX_PAGES: '30' });
    const row = await eventRow(scene.sandbox);
    const capturedAt = scene.sandbox.now().toISOString();
    // Far more pages than the cap, each with new events and a new cursor.
    const endless = (request: { query: Record<string, string> }) => {
      const n = Number(request.query['cursor']?.replace('endless-', '') ?? 0) + 1;
      const data = Array.from({ length: 5 }, (_, i) => ({ ...row, event_ticker: `ENDLESS-${n}-${i}`, captured_at: capturedAt }));
      return JSON.stringify({ data, next_cursor: `endless-${n}`, has_more: true });
    };
    const { result, eventRequests } = await hostilePoll(scene, { status: 200, body: endless, count: 500 });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'edgewatch poll: source events failed: events list: page_limit: 30 pages read and has_more is still true; EDGEWATCH_MAX_PAGES (30) caps the pages one poll reads from one list',
    );
    expect(eventRequests).toBe(30);
  });

  it('refuses a page over EDGEWATCH_MAX_RESPONSE_MB once, without retry, and delivers the other sources', { timeout: 180_000 }, async () => {
    const scene = await baselined({ EDGEWATCH_MAX_RESPONSE_MB: '1' });
    const row = await eventRow(scene.sandbox);
    // A well-formed page of 3 MB: only its size is wrong.
    const huge = JSON.stringify({ data: [{ ...row, key_takeaway: 'x'.repeat(3 * 1024 * 1024) }], next_cursor: null, has_more: false });
    const { result, eventRequests } = await hostilePoll(scene, { status: 200, body: huge, count: 10 });

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /edgewatch poll: source events failed: events list: response_too_large \(HTTP 200\): GET \/predictions\/events sent (more than )?\d+ bytes, over the 1 MB limit \(EDGEWATCH_MAX_RESPONSE_MB\)/,
    );
    expect(eventRequests).toBe(1);
  });

  it('names the list, the row and the field of an object nested too deep, and delivers the other sources', { timeout: 180_000 }, async () => {
    const scene = await baselined({});
    const row = await eventRow(scene.sandbox);
    const rowText = JSON.stringify({ ...row, event_ticker: 'KXDEEP', research: null });
    const deep = '{"a":'.repeat(50_000) + '1' + '}'.repeat(50_000);
    const body = `{"data":[${rowText.replace('"research":null', `"research":${deep}`)}],"next_cursor":null,"has_more":false}`;
    const { result } = await hostilePoll(scene, { status: 200, body, count: 10 });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('edgewatch poll: source events failed: invalid_response: events list: row KXDEEP: field research: nested more than 100 levels deep');
    expect(result.stderr).not.toContain('Maximum call stack');
  });
});
