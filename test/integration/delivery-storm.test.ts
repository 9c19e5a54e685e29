// Alert storms: many alerts in one cycle. Slack gets a handful of grouped messages (its rate
// limits); a webhook gets every alert, once each.
import { afterEach, describe, expect, it } from 'vitest';
import { deliverStep, deliveryRows } from '../helpers/delivery.ts';
import { startPipeline, type Pipeline } from '../helpers/pipeline.ts';
import { startSlackApi, startWebhookReceiver, type SlackApi, type WebhookReceiver } from '../helpers/receivers.ts';

let pipeline: Pipeline | undefined;
let slack: SlackApi | undefined;
let receiver: WebhookReceiver | undefined;

afterEach(async () => {
  await pipeline?.close();
  await slack?.close();
  await receiver?.close();
  pipeline = undefined;
  slack = undefined;
  receiver = undefined;
});

const SLACK_RULES = `
channels:
  trading: { type: slack, channel: "#pm-alerts" }
rules:
  - name: new-events
    source: events
    trigger: { type: new }
    notify: [trading]
`;

const webhookRules = (url: string) => `
channels:
  hook: { type: webhook, url: "${url}" }
rules:
  - name: new-events
    source: events
    trigger: { type: new }
    notify: [hook]
`;

describe('alert storms', () => {
  it('200 alerts for one Slack channel in one cycle go as a handful of messages', async () => {
    const api = (slack = await startSlackApi());
    const p = (pipeline = await startPipeline({ rules: SLACK_RULES, transports: { slack: true, email: false } }));
    await p.poll();
    for (let i = 0; i < 200; i++) p.sandbox.world.addEvent();
    const report = await p.poll();
    expect(report.failures).toEqual([]);
    expect(report.alerts).toHaveLength(200);

    const delivery = await deliverStep(p, { slackToken: 'xoxb-storm', slackApiUrl: api.apiUrl });
    expect(delivery).toEqual({ delivered: 200, retrying: 0, dead: 0 });
    expect(api.calls.length).toBeGreaterThanOrEqual(1);
    expect(api.calls.length).toBeLessThanOrEqual(3);
    for (const call of api.calls) {
      expect(call.channel).toBe('#pm-alerts');
      expect((call.blocks as unknown[]).length).toBeLessThanOrEqual(50);
      expect(call.text!.length).toBeLessThanOrEqual(3_000);
    }
    expect(api.calls[0]!.text).toMatch(/^200 edgewatch alerts\n/);
    expect(api.calls[0]!.text).toContain('... and 180 more');
    const rows = deliveryRows(p.sql);
    expect(rows).toHaveLength(200);
    expect(rows.every((r) => r.status === 'delivered' && r.attempts === 1)).toBe(true);

    // A later cycle with a few alerts sends them one by one again.
    for (let i = 0; i < 3; i++) p.sandbox.world.addEvent();
    await p.poll();
    await deliverStep(p, { slackToken: 'xoxb-storm', slackApiUrl: api.apiUrl });
    expect(api.calls.length).toBeLessThanOrEqual(6);
    expect(deliveryRows(p.sql).every((r) => r.status === 'delivered')).toBe(true);
  });

  it('1,000 alerts to a webhook are all delivered, once each', { timeout: 60_000 }, async () => {
    const r = (receiver = await startWebhookReceiver());
    const p = (pipeline = await startPipeline({ rules: webhookRules(r.url) }));
    await p.poll();
    for (let i = 0; i < 1000; i++) p.sandbox.world.addEvent();
    const report = await p.poll();
    expect(report.failures).toEqual([]);
    expect(report.alerts).toHaveLength(1000);

    expect(await deliverStep(p, {})).toEqual({ delivered: 1000, retrying: 0, dead: 0 });
    const ids = r.requests.map((q) => q.headers['webhook-id']);
    expect(r.requests).toHaveLength(1000);
    expect(new Set(ids).size).toBe(1000);
    expect(new Set(ids)).toEqual(new Set(p.storedAlerts().map((a) => a.id)));
    for (const request of r.requests) expect(request.json()).toMatchObject({ id: request.headers['webhook-id'], type: 'alert' });

    // Nothing is left to send.
    expect(await deliverStep(p, {})).toEqual({ delivered: 0, retrying: 0, dead: 0 });
    expect(r.requests).toHaveLength(1000);
  });
});
