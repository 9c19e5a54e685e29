// An alert's whole life through the pipeline, over real sockets: the sandbox, a Slack stand-in that
// records chat.postMessage and chat.update, an SMTP server, a webhook receiver that verifies
// signatures. Dwell, resolution (Slack in place and in thread, email threading, webhook
// `resolved`), inhibition, source health notices, cited explanations and a hanging agent.
import { afterEach, describe, expect, it } from 'vitest';
import { pollSources } from '../../src/service/cycle.ts';
import { startGeneration } from '../../src/service/generate.ts';
import { listAlerts } from '../../src/store/index.ts';
import { deliverStep, deliveryRows } from '../helpers/delivery.ts';
import { startPipeline, type Pipeline } from '../helpers/pipeline.ts';
import {
  mailHeader,
  mailPart,
  slackNumbered,
  startSlackApi,
  startSmtp,
  startWebhookReceiver,
  verifyWebhook,
  type SlackApi,
  type SmtpReceiver,
  type WebhookReceiver,
} from '../helpers/receivers.ts';

const TOKEN = 'xoxb-test-0000-alert-life';
const SECRET = 'whsec_' + Buffer.alloc(32, 9).toString('base64');

let pipeline: Pipeline | undefined;
let slack: SlackApi | undefined;
let smtp: SmtpReceiver | undefined;
let hook: WebhookReceiver | undefined;

afterEach(async () => {
  await pipeline?.close();
  await slack?.close();
  await smtp?.close();
  await hook?.close();
  pipeline = slack = smtp = hook = undefined;
});

/** A rules file with a Slack, an email and a signed webhook channel (the hook's URL filled in). */
function channels(hookUrl: string): string {
  return `
channels:
  trading: { type: slack, channel: "#pm-alerts" }
  me: { type: email, to: [analyst@example.com] }
  pipeline: { type: webhook, url: ${hookUrl}, secret: ${SECRET} }
`;
}

async function receivers(): Promise<{ transports: { slackToken: string; slackApiUrl: string; smtpUrl: string }; hookUrl: string }> {
  slack = await startSlackApi(slackNumbered());
  smtp = await startSmtp();
  hook = await startWebhookReceiver();
  return { transports: { slackToken: TOKEN, slackApiUrl: slack.apiUrl, smtpUrl: smtp.url }, hookUrl: hook.url };
}

/** The baseline, then the first event at `edge` (its next change starts from there). */
async function baselineWith(p: Pipeline, edge: number): Promise<string> {
  await p.poll();
  const [ticker] = p.sandbox.world.eventTickers() as [string];
  p.sandbox.world.updateEvent(ticker, { edge_pp: edge, confidence_score: 7 });
  expect((await p.poll()).alerts).toEqual([]);
  return ticker;
}

const count = (p: Pipeline, table: string): number => (p.sql.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;

describe("an alert's life", () => {
  it('a crossing held for `for` fires once, at the first poll after the dwell, also when the event did not change', async () => {
    const p = (pipeline = await startPipeline({
      rules: `
channels: { screen: { type: console } }
rules:
  - { name: held, source: events, trigger: { type: crosses, field: edge_pp, above: 10 }, for: 10m, notify: [screen] }
`,
    }));
    // The poll's clock moves; the world stands still, so only this event changes.
    let clock = p.sandbox.now();
    const poll = async (minutes = 0) => {
      clock = new Date(clock.getTime() + minutes * 60_000);
      return (await pollSources({ store: p.store, api: p.api, rules: p.ruleSet.rules, now: () => clock, reportsBudget: 10 })).alerts;
    };
    await poll();
    const [ticker] = p.sandbox.world.eventTickers() as [string];
    p.sandbox.world.updateEvent(ticker, { edge_pp: 4 });
    expect(await poll(1)).toEqual([]);
    p.sandbox.world.updateEvent(ticker, { edge_pp: 12 });
    expect(await poll(1)).toEqual([]);
    expect(await poll(5)).toEqual([]);
    expect(await poll(4)).toEqual([]); // 9 minutes
    const alerts = await poll(2);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({ rule: 'held', entity: ticker, fired_at: clock.toISOString().replace(/\.\d{3}Z$/, 'Z') });
    expect(await poll(20)).toEqual([]);
    await p.restart();
    expect(await poll(20)).toEqual([]);
    expect(count(p, 'alerts')).toBe(1);
    expect(count(p, 'timers')).toBe(0);
  });

  it('a resolved notice updates the Slack message in place and replies in its thread, threads the email, and posts a signed `resolved` webhook', async () => {
    const { transports, hookUrl } = await receivers();
    const p = (pipeline = await startPipeline({
      transports: { slack: true, email: true },
      rules: `${channels(hookUrl)}
rules:
  - { name: edge, source: events, trigger: { type: crosses, field: edge_pp, above: 10, rearm: 2 }, resolve: true, notify: [trading, me, pipeline] }
`,
    }));
    const ticker = await baselineWith(p, 4);
    p.sandbox.world.updateEvent(ticker, { edge_pp: 12 });
    const [alert] = (await p.poll()).alerts;
    expect(await deliverStep(p, transports)).toMatchObject({ delivered: 3, dead: 0 });
    const posted = slack!.calls[0]!;
    expect(posted).toMatchObject({ method: 'chat.postMessage', channel: '#pm-alerts', thread_ts: null });
    expect(p.sql.prepare('SELECT message_ref FROM deliveries WHERE channel = ?').get('trading')).toEqual({ message_ref: JSON.stringify({ channel: 'C0123', ts: '1700000000.000001' }) });

    // 9 is not back by the rearm (8): still open.
    p.sandbox.world.updateEvent(ticker, { edge_pp: 9 });
    await p.poll();
    expect((await listAlerts(p.store, 5))[0]!.resolved_at).toBeNull();
    p.sandbox.world.updateEvent(ticker, { edge_pp: 7.5 });
    await p.poll();
    await p.poll(); // re-polling the same data resolves nothing twice
    expect(count(p, 'resolutions')).toBe(1);
    const [listed] = await listAlerts(p.store, 5);
    expect(listed!.resolved_at).toMatch(/Z$/);
    expect(await deliverStep(p, transports)).toMatchObject({ delivered: 3, dead: 0 });
    expect(await deliverStep(p, transports)).toMatchObject({ delivered: 0 });

    // Slack: the original message marked resolved in place, then a reply in its thread.
    const [update, reply, ...none] = slack!.calls.slice(1);
    expect(none).toEqual([]);
    expect(update).toMatchObject({ method: 'chat.update', channel: 'C0123', ts: '1700000000.000001' });
    expect(update!.text).toMatch(/^✅ Resolved: /);
    expect(reply).toMatchObject({ method: 'chat.postMessage', channel: 'C0123', thread_ts: '1700000000.000001' });
    expect(reply!.text).toContain('back within 10 pp');

    // Email: the alert's Message-ID, answered by the resolved message.
    const [first, second] = smtp!.mails;
    const messageId = mailHeader(first!.raw, 'Message-ID')!;
    expect(messageId).toContain(alert!.id);
    expect(mailHeader(second!.raw, 'In-Reply-To')).toBe(messageId);
    expect(mailHeader(second!.raw, 'References')).toBe(messageId);
    expect(mailHeader(second!.raw, 'Message-ID')).not.toBe(messageId);
    expect(mailHeader(second!.raw, 'Subject')).toMatch(/^Resolved: /);

    // Webhook: its own id, the alert it resolves, signed.
    const body = verifyWebhook(hook!.requests[1]!, SECRET) as Record<string, unknown>;
    expect(body).toMatchObject({ version: 1, type: 'resolved', alert_id: alert!.id, rule: 'edge', entity: ticker, resolved_at: listed!.resolved_at });
    expect(body.id).not.toBe(alert!.id);
    expect(hook!.requests[1]!.headers['webhook-id']).toBe(body.id);
    expect(body.summary).toContain('resolved');
    expect(body.changes).toEqual([{ field: 'edge_pp', from: 9, to: 7.5 }]);
    expect((body.current as Record<string, unknown>).edge_pp).toBe(7.5);
  });

  it('an inhibited alert is stored with the entry that inhibited it and never sent', async () => {
    hook = await startWebhookReceiver();
    const p = (pipeline = await startPipeline({
      rules: `
channels: { pipeline: { type: webhook, url: ${hook.url} } }
rules:
  - name: edge
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10 }
    unless:
      - { source: reports, filter: { trust_label: [Avoid] } }
      - { filter: { confidence_score: { lt: 3 } } }
    notify: [pipeline]
`,
    }));
    const ticker = await baselineWith(p, 4);
    p.sandbox.world.updateEvent(ticker, { edge_pp: 12, confidence_score: 2 });
    const [alert] = (await p.poll()).alerts;
    expect(await deliverStep(p, {})).toEqual({ delivered: 0, retrying: 0, dead: 0 });
    expect(hook.requests).toEqual([]);
    expect(deliveryRows(p.sql)).toMatchObject([{ alert_id: alert!.id, status: 'inhibited', attempts: 0 }]);
    expect(JSON.parse((p.sql.prepare('SELECT inhibited_by FROM alerts').get() as { inhibited_by: string }).inhibited_by)).toEqual({ entry: 1, source: 'events', entity: ticker });
    expect((await listAlerts(p.store, 1))[0]!.deliveries).toEqual([{ channel: 'pipeline', status: 'inhibited', attempts: 0, last_error: null }]);
  });

  it('an outage of 5 polls gives exactly one `degraded` and one `recovered` notice; a 401 degrades at once', async () => {
    hook = await startWebhookReceiver();
    const p = (pipeline = await startPipeline({ rules: `health: { notify: [ops], after: 3 }\nchannels: { ops: { type: webhook, url: ${hook.url} } }\n` }));
    const poll = () => pollSources({ store: p.store, api: p.api, rules: [], now: () => p.sandbox.now(), reportsBudget: 10, sources: ['kpis'], health: p.ruleSet.health });
    await poll();
    p.sandbox.inject({ path: '/v1/predictions/kpi-events', status: 500, count: 5 });
    for (let i = 1; i <= 5; i++) {
      expect((await poll()).failures).toHaveLength(1);
      await deliverStep(p, {});
      expect(hook.requests).toHaveLength(i < 3 ? 0 : 1);
    }
    expect((await poll()).failures).toEqual([]);
    await poll();
    await deliverStep(p, {});
    const bodies = hook.requests.map((r) => r.json());
    expect(bodies.map((b) => [b.type, b.source, b.status])).toEqual([
      ['health', 'kpis', 'degraded'],
      ['health', 'kpis', 'recovered'],
    ]);
    expect(bodies[0]!.error).toMatch(/500/);
    expect(bodies[1]!.error).toBeNull();
    expect(bodies[0]!.id).not.toBe(bodies[1]!.id);

    p.sandbox.advance(1); // another outage, at another time
    p.sandbox.inject({ path: '/v1/predictions/kpi-events', status: 401, count: 1 });
    expect((await poll()).failures).toHaveLength(1);
    await deliverStep(p, {});
    expect((hook.requests[2]!.json()).status).toBe('degraded');
  });

  it('an explanation with numbered citations appears in Slack, email and the webhook; a hanging agent delays the delivery by at most its timeout', async () => {
    const { transports, hookUrl } = await receivers();
    const p = (pipeline = await startPipeline({
      transports: { slack: true, email: true },
      rules: `${channels(hookUrl)}
rules:
  - name: edge
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10 }
    explain: { agent: svc-agent, ask: "Why might {{ title }} ({{ entity }}) have moved from {{ from }} to {{ to }}?", timeout: 2s }
    notify: [trading, me, pipeline]
`,
    }));
    const ticker = await baselineWith(p, 4);
    p.sandbox.world.updateEvent(ticker, { edge_pp: 12 });
    await p.poll();
    expect(await deliverStep(p, transports, { explain: {} })).toMatchObject({ delivered: 3 });

    const body = verifyWebhook(hook!.requests[0]!, SECRET) as { explanation: { agent: string; text: string; citations: Array<{ order: number; name: string; url: string }> } };
    expect(body.explanation.agent).toBe('svc-agent');
    expect(body.explanation.text).toContain('[1]');
    expect(body.explanation.citations.map((c) => c.order)).toEqual([1, 2]);
    const [citation] = body.explanation.citations;
    const blocks = JSON.stringify(slack!.calls[0]!.blocks);
    expect(blocks).toContain('*Explanation* (svc-agent)');
    expect(blocks).toContain(`[1] <${citation!.url.replace(/[<>|]/g, encodeURIComponent)}|`);
    const html = mailPart(smtp!.mails[0]!.raw, 'text/html');
    expect(html).toContain('Explanation (svc-agent)');
    expect(html).toContain(`[1] <a href=`);
    // Asked once for the three channels, and stored with the alert.
    expect(JSON.parse((p.sql.prepare('SELECT explanation FROM alerts').get() as { explanation: string }).explanation)).toEqual(body.explanation);
    expect(p.sql.prepare("SELECT value FROM meta WHERE key LIKE 'agent_questions:%'").get()).toEqual({ value: '1' });

    // The agent hangs: the delivery goes after the timeout (2 s), without an explanation.
    p.sandbox.inject({ path: '/v1/responses', delayMs: 30_000, count: 5 });
    p.sandbox.world.updateEvent(ticker, { edge_pp: 4 });
    await p.poll();
    p.sandbox.world.updateEvent(ticker, { edge_pp: 13 });
    await p.poll();
    const started = performance.now();
    expect(await deliverStep(p, transports, { explain: {} })).toMatchObject({ delivered: 3, dead: 0 });
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(1_900);
    expect(elapsed).toBeLessThan(8_000);
    expect((hook!.requests[1]!.json() as { explanation: unknown }).explanation).toBeNull();
  });

  it('a day over EDGEWATCH_AGENT_DAILY_LIMIT asks no more: the alert goes without an explanation', async () => {
    hook = await startWebhookReceiver();
    const p = (pipeline = await startPipeline({
      rules: `
channels: { pipeline: { type: webhook, url: ${hook.url} } }
rules:
  - { name: edge, source: events, trigger: { type: crosses, field: edge_pp, above: 10 }, explain: { agent: svc-agent, ask: "Why {{ title }}?" }, notify: [pipeline] }
`,
    }));
    const ticker = await baselineWith(p, 4);
    p.sandbox.world.updateEvent(ticker, { edge_pp: 12 });
    await p.poll();
    expect(await deliverStep(p, {}, { explain: { dailyLimit: 0 } })).toMatchObject({ delivered: 1 });
    expect((hook.requests[0]!.json() as { explanation: unknown }).explanation).toBeNull();
  });

  it("a generation run's notices go to one Slack message: the later one updates it and replies in its thread", async () => {
    slack = await startSlackApi(slackNumbered());
    const transports = { slackToken: TOKEN, slackApiUrl: slack.apiUrl };
    const p = (pipeline = await startPipeline({
      transports: { slack: true, email: false },
      rules: `
channels: { trading: { type: slack, channel: "#runs" } }
rules:
  - { name: run-started, source: runs, trigger: { type: appears, field: requested_url }, notify: [trading] }
  - { name: run-finished, source: runs, trigger: { type: changes, field: status, to: [completed, failed] }, notify: [trading] }
`,
    }));
    await p.poll();
    const ticker = p.sandbox.world.addEvent({ edge_pp: 3 }); // a new event: open, on venuea
    const run = await startGeneration(p.store, p.api, 'venuea', ticker, p.sandbox.now());
    expect((await p.poll()).alerts.map((a) => a.rule)).toEqual(['run-started']);
    await deliverStep(p, transports);
    p.sandbox.world.finishRun(run.runId, 'completed');
    expect((await p.poll()).alerts.map((a) => a.rule)).toEqual(['run-finished']);
    await deliverStep(p, transports);
    expect(slack.calls.map((c) => [c.method, c.ts, c.thread_ts])).toEqual([
      ['chat.postMessage', null, null],
      ['chat.update', '1700000000.000001', null],
      ['chat.postMessage', null, '1700000000.000001'],
    ]);
    expect(slack.calls[1]!.text).toBe(slack.calls[2]!.text);
    // Both deliveries keep the thread's message.
    expect(new Set(p.sql.prepare('SELECT message_ref FROM deliveries').all().map((r) => (r as { message_ref: string }).message_ref)).size).toBe(1);

    // A run whose two notices are due in one pass: the second waits for the first, then threads.
    const second = await startGeneration(p.store, p.api, 'venuea', p.sandbox.world.addEvent({ edge_pp: 3 }), p.sandbox.now());
    await p.poll();
    p.sandbox.world.finishRun(second.runId, 'failed');
    expect((await p.poll()).alerts.map((a) => a.rule)).toEqual(['run-finished']);
    expect(await deliverStep(p, transports)).toMatchObject({ delivered: 1 });
    expect(await deliverStep(p, transports)).toMatchObject({ delivered: 1 });
    expect(slack.calls.slice(3).map((c) => [c.method, c.ts, c.thread_ts])).toEqual([
      ['chat.postMessage', null, null],
      ['chat.update', '1700000000.000003', null],
      ['chat.postMessage', null, '1700000000.000003'],
    ]);
  });

  it('quiet hours hold a delivery as pending until the window ends; a critical alert goes at once', async () => {
    hook = await startWebhookReceiver();
    const p0 = await startPipeline({ rules: 'channels: { x: { type: console } }\n' });
    const clock = p0.sandbox.now();
    await p0.close();
    const hhmm = (d: Date): string => d.toISOString().slice(11, 16);
    const from = new Date(clock.getTime() - 3_600_000);
    const to = new Date(clock.getTime() + 3_600_000);
    const p = (pipeline = await startPipeline({
      rules: `
channels: { pipeline: { type: webhook, url: ${hook.url}, quiet: { from: "${hhmm(from)}", to: "${hhmm(to)}", timezone: UTC } } }
rules:
  - { name: edge-info, source: events, trigger: { type: crosses, field: edge_pp, above: 10 }, notify: [pipeline] }
  - { name: edge-critical, source: events, trigger: { type: crosses, field: edge_pp, above: 11 }, severity: critical, notify: [pipeline] }
`,
    }));
    const ticker = await baselineWith(p, 4);
    p.sandbox.world.updateEvent(ticker, { edge_pp: 12 });
    await p.poll();
    expect(await deliverStep(p, {}, { now: clock })).toMatchObject({ delivered: 1 });
    expect(hook.requests.map((r) => r.json().rule)).toEqual(['edge-critical']);
    expect(deliveryRows(p.sql).find((d) => d.rule === 'edge-info')).toMatchObject({ status: 'pending', attempts: 0 });
    const windowEnd = new Date(Date.parse(`${to.toISOString().slice(0, 16)}:00Z`) + 1_000);
    expect(await deliverStep(p, {}, { now: windowEnd })).toMatchObject({ delivered: 1 });
    expect(hook.requests.map((r) => r.json().rule)).toEqual(['edge-critical', 'edge-info']);
  });
});
