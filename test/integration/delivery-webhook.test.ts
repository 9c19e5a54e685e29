// Webhooks through the whole pipeline: sandbox -> poll -> store -> outbox -> a local receiver that
// verifies the Standard Webhooks signature with the published `standardwebhooks` library.
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, startSandboxWithRules } from '../helpers/cli.ts';
import { deliverStep, deliveryRows, later } from '../helpers/delivery.ts';
import { startPipeline, type Pipeline } from '../helpers/pipeline.ts';
import { answer, inTurn, startWebhookReceiver, verifyWebhook, type WebhookReceiver, type WebhookRequest } from '../helpers/receivers.ts';

const SECRET = `whsec_${Buffer.from('edgewatch-webhook-test-secret-32').toString('base64')}`;
const CONTRACT_FIELDS = ['version', 'type', 'id', 'rule', 'severity', 'source', 'entity', 'trigger', 'fired_at', 'summary', 'changes', 'current', 'explanation'];
const LISTING_FIELDS = ['id', 'rule', 'severity', 'source', 'entity', 'trigger', 'fired_at', 'resolved_at', 'summary', 'deliveries'];

const rules = (url: string) => `
channels:
  hook:
    type: webhook
    url: ${url}
    secret: ${SECRET}
    headers: { X-Team: research }
rules:
  - name: edge-over-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, abs: true }
    severity: warning
    notify: [hook]
`;

let pipeline: Pipeline | undefined;
let receiver: WebhookReceiver | undefined;
const held: ServerResponse[] = [];

afterEach(async () => {
  for (const res of held.splice(0)) res.destroy();
  await pipeline?.close();
  await receiver?.close();
  pipeline = undefined;
  receiver = undefined;
});

const verify = (request: WebhookRequest): unknown => verifyWebhook(request, SECRET);

/** Baseline, then every given event armed below the threshold. */
async function setUp(tickers: number): Promise<{ p: Pipeline; r: WebhookReceiver; events: string[] }> {
  const r = (receiver = await startWebhookReceiver());
  const p = (pipeline = await startPipeline({ rules: rules(r.url) }));
  await p.poll();
  const events = p.sandbox.world.eventTickers().slice(0, tickers);
  for (const ticker of events) p.sandbox.world.updateEvent(ticker, { edge_pp: 4 });
  await p.poll();
  expect(p.storedAlerts()).toEqual([]);
  return { p, r, events };
}

/** Makes one event cross 10 pp and polls: one new alert. */
async function cross(p: Pipeline, ticker: string, edge = 15): Promise<string> {
  p.sandbox.world.updateEvent(ticker, { edge_pp: edge });
  const report = await p.poll();
  expect(report.alerts.map((a) => a.entity)).toEqual([ticker]);
  return report.alerts[0]!.id;
}

describe('webhook delivery through the pipeline', () => {
  it('posts exactly the contract body with Standard Webhooks headers that the receiver verifies', async () => {
    const { p, r, events } = await setUp(1);
    const ticker = events[0]!;
    const id = await cross(p, ticker, -12.5);
    const at = new Date();

    expect(await deliverStep(p, {}, { now: at })).toEqual({ delivered: 1, retrying: 0, dead: 0 });
    expect(r.requests).toHaveLength(1);
    const request = r.requests[0]!;
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/hooks/edgewatch');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['webhook-id']).toBe(id);
    expect(request.headers['webhook-timestamp']).toBe(String(Math.floor(at.getTime() / 1000)));
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(request.headers['x-team']).toBe('research');
    expect(verify(request)).toMatchObject({ id, type: 'alert' });

    const body = JSON.parse(request.body) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(CONTRACT_FIELDS);
    const stored = p.sql.prepare<[string], { data: string }>("SELECT data FROM entities WHERE source = 'events' AND entity_key = ?").get(ticker)!;
    expect(body).toMatchObject({
      version: 1,
      type: 'alert',
      id,
      rule: 'edge-over-10',
      severity: 'warning',
      source: 'events',
      entity: ticker,
      trigger: 'crosses',
    });
    expect(body.fired_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(body.summary).toEqual(expect.stringContaining('10 pp'));
    // Every changed field, the trigger's first, each exactly {field, from, to}.
    const changes = body.changes as Array<Record<string, unknown>>;
    expect(changes[0]).toEqual({ field: 'edge_pp', from: 4, to: -12.5 });
    for (const change of changes) expect(Object.keys(change)).toEqual(['field', 'from', 'to']);
    // `current` is the whole stored snapshot, not a shortened one.
    expect(body.current).toEqual(JSON.parse(stored.data));
    expect(body.current).toMatchObject({ event_ticker: ticker, edge_pp: -12.5, abs_edge_pp: 12.5 });

    expect(deliveryRows(p.sql)).toMatchObject([{ alert_id: id, channel: 'hook', status: 'delivered', attempts: 1, last_error: null }]);
    // Delivered means done: a later pass sends nothing.
    await deliverStep(p, {}, { now: later(at, 3_600_000) });
    expect(r.requests).toHaveLength(1);
  });

  it('retries 500s with backoff (same id, fresh timestamp and signature), is dead at once on a 400, retries a timeout; alerts --json shows it', { timeout: 60_000 }, async () => {
    const { p, r, events } = await setUp(3);
    const [retried, refused, slow] = events as [string, string, string];
    const t0 = new Date();

    // 500, 500, 200: delivered on the third attempt.
    r.reply = inTurn(answer(500), answer(503, { 'Retry-After': '2' }), answer(200));
    const first = await cross(p, retried);
    expect(await deliverStep(p, {}, { now: t0 })).toEqual({ delivered: 0, retrying: 1, dead: 0 });
    expect(deliveryRows(p.sql)[0]).toMatchObject({ status: 'pending', attempts: 1, last_error: 'webhook: HTTP 500' });
    // Backoff: not due again 100 ms later.
    expect(await deliverStep(p, {}, { now: later(t0, 100) })).toEqual({ delivered: 0, retrying: 0, dead: 0 });
    expect(r.requests).toHaveLength(1);
    expect(await deliverStep(p, {}, { now: later(t0, 5_000) })).toEqual({ delivered: 0, retrying: 1, dead: 0 });
    const afterSecond = deliveryRows(p.sql)[0]!;
    expect(afterSecond).toMatchObject({ status: 'pending', attempts: 2, last_error: 'webhook: HTTP 503' });
    // The receiver's Retry-After (2 s) is longer than the backoff (1 s): it wins.
    expect(Date.parse(afterSecond.next_attempt_at!)).toBe(t0.getTime() + 5_000 + 2_000);
    expect(await deliverStep(p, {}, { now: later(t0, 6_000) })).toEqual({ delivered: 0, retrying: 0, dead: 0 });
    expect(await deliverStep(p, {}, { now: later(t0, 10_000) })).toEqual({ delivered: 1, retrying: 0, dead: 0 });

    expect(r.requests).toHaveLength(3);
    expect(r.requests.map((q) => q.headers['webhook-id'])).toEqual([first, first, first]);
    expect(new Set(r.requests.map((q) => q.body)).size).toBe(1);
    const seconds = Math.floor(t0.getTime() / 1000);
    expect(r.requests.map((q) => Number(q.headers['webhook-timestamp']))).toEqual([seconds, seconds + 5, seconds + 10]);
    expect(new Set(r.requests.map((q) => q.headers['webhook-signature'])).size).toBe(3);
    for (const request of r.requests) expect(verify(request)).toMatchObject({ id: first });
    expect(deliveryRows(p.sql)[0]).toMatchObject({ status: 'delivered', attempts: 3, last_error: null });

    // 400: dead at once, never tried again.
    r.reply = answer(400);
    const second = await cross(p, refused);
    expect(await deliverStep(p, {}, { now: later(t0, 20_000) })).toEqual({ delivered: 0, retrying: 0, dead: 1 });
    expect(await deliverStep(p, {}, { now: later(t0, 3_600_000) })).toEqual({ delivered: 0, retrying: 0, dead: 0 });
    expect(r.requests.filter((q) => q.headers['webhook-id'] === second)).toHaveLength(1);

    // Slower than the timeout: a retryable failure, then delivered with the same id.
    r.reply = (_request, res) => void held.push(res);
    const third = await cross(p, slow);
    const started = Date.now();
    expect(await deliverStep(p, {}, { now: later(t0, 30_000), webhookTimeoutMs: 300 })).toEqual({ delivered: 0, retrying: 1, dead: 0 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(deliveryRows(p.sql)[2]).toMatchObject({ alert_id: third, status: 'pending', attempts: 1, last_error: 'webhook: timeout after 300 ms' });

    // What a user sees, through the real command line.
    const cli = await runCli(['alerts', '--json'], { EDGEWATCH_DB: p.dbPath });
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    const listed = JSON.parse(cli.stdout) as Array<Record<string, unknown>>;
    expect(listed).toHaveLength(3);
    for (const alert of listed) {
      expect(Object.keys(alert).sort()).toEqual([...LISTING_FIELDS].sort());
      for (const d of alert.deliveries as Array<Record<string, unknown>>) expect(Object.keys(d).sort()).toEqual(['attempts', 'channel', 'last_error', 'status']);
    }
    const byId = new Map(listed.map((a) => [a.id, a]));
    const stored = new Map(p.storedAlerts().map((a) => [a.id, a]));
    for (const id of [first, second, third]) {
      const a = stored.get(id)!;
      expect(byId.get(id)).toMatchObject({
        id,
        rule: 'edge-over-10',
        severity: 'warning',
        source: 'events',
        entity: a.entity,
        trigger: 'crosses',
        fired_at: a.fired_at,
        summary: a.summary,
      });
    }
    expect(byId.get(first)?.deliveries).toEqual([{ channel: 'hook', status: 'delivered', attempts: 3, last_error: null }]);
    expect(byId.get(second)?.deliveries).toEqual([{ channel: 'hook', status: 'dead', attempts: 1, last_error: 'webhook: HTTP 400' }]);
    expect(byId.get(third)?.deliveries).toEqual([{ channel: 'hook', status: 'pending', attempts: 1, last_error: 'webhook: timeout after 300 ms' }]);
    // Newest first.
    expect(listed.map((a) => a.fired_at)).toEqual([...listed.map((a) => String(a.fired_at))].sort().reverse());

    r.reply = answer(204);
    expect(await deliverStep(p, {}, { now: later(t0, 60_000) })).toEqual({ delivered: 1, retrying: 0, dead: 0 });
    const slowRequests = r.requests.filter((q) => q.headers['webhook-id'] === third);
    expect(slowRequests).toHaveLength(2);
    expect(slowRequests[0]!.body).toBe(slowRequests[1]!.body);
    expect(deliveryRows(p.sql)[2]).toMatchObject({ status: 'delivered', attempts: 2, last_error: null });
  });
});

describe('poll --once exit codes and delivery', () => {
  it('exits 0 when a delivery is only retrying, 1 when one went dead during the command', { timeout: 120_000 }, async () => {
    const r = (receiver = await startWebhookReceiver(answer(500)));
    const { sandbox, env, close } = await startSandboxWithRules({
      sandbox: { apiKey: 'exit-key', events: 20, kpis: 5 },
      rules: `
channels:
  hook: { type: webhook, url: "${r.url}", secret: ${SECRET} }
rules:
  - name: new-events
    source: events
    trigger: { type: new }
    notify: [hook]
`,
    });
    try {
      expect((await runCli(['poll', '--once'], env)).code).toBe(0);

      sandbox.world.addEvent();
      const retrying = await runCli(['poll', '--once'], env);
      expect(retrying.stderr).toBe('');
      expect(retrying.code).toBe(0);
      expect(r.requests).toHaveLength(1);

      r.reply = answer(410);
      sandbox.world.addEvent();
      const dead = await runCli(['poll', '--once'], env);
      expect(dead.code).toBe(1);
      // Only the new alert was due: the retry waits for its backoff (30 s by default).
      expect(r.requests).toHaveLength(2);
      for (const request of r.requests) expect(verify(request)).toMatchObject({ type: 'alert' });

      const listed = JSON.parse((await runCli(['alerts', '--json'], env)).stdout) as Array<{ deliveries: unknown[] }>;
      expect(listed.map((a) => a.deliveries)).toEqual([
        [{ channel: 'hook', status: 'dead', attempts: 1, last_error: 'webhook: HTTP 410' }],
        [{ channel: 'hook', status: 'pending', attempts: 1, last_error: 'webhook: HTTP 500' }],
      ]);
    } finally {
      await close();
    }
  });
});
