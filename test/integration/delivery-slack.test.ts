// Slack through the whole pipeline: sandbox -> poll -> store -> outbox -> a local stand-in for
// Slack's Web API (SLACK_API_URL), including a rate limit honoured before the next attempt.
import { afterEach, describe, expect, it } from 'vitest';
import { deliverStep, deliveryRows, later } from '../helpers/delivery.ts';
import { startPipeline, type Pipeline } from '../helpers/pipeline.ts';
import { slackJson, slackOk, startSlackApi, type SlackApi } from '../helpers/receivers.ts';

const TOKEN = 'xoxb-test-0000-delivery';

const RULES = `
channels:
  trading:
    type: slack
    channel: "#pm-alerts"
rules:
  - name: edge-over-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, abs: true }
    severity: critical
    notify: [trading]
`;

let pipeline: Pipeline | undefined;
let slack: SlackApi | undefined;

afterEach(async () => {
  await pipeline?.close();
  await slack?.close();
  pipeline = undefined;
  slack = undefined;
});

describe('slack delivery through the pipeline', () => {
  it('posts chat.postMessage with channel, text and blocks; a 429 with Retry-After is retried after it, then succeeds', async () => {
    const api = (slack = await startSlackApi());
    const p = (pipeline = await startPipeline({ rules: RULES, transports: { slack: true, email: false } }));
    const transports = { slackToken: TOKEN, slackApiUrl: api.apiUrl };
    await p.poll();
    const [ticker] = p.sandbox.world.eventTickers() as [string];
    p.sandbox.world.updateEvent(ticker, { edge_pp: 4, name: 'Fed decision in December 2026' });
    await p.poll();
    p.sandbox.world.updateEvent(ticker, { edge_pp: 12.3 });
    const [alert] = (await p.poll()).alerts;
    expect(alert?.entity).toBe(ticker);

    let rateLimited = 0;
    api.reply = (call, res) => {
      if (rateLimited++ === 0) return slackJson(res, { ok: false, error: 'ratelimited' }, 429, { 'Retry-After': '3' });
      slackOk(call, res);
    };
    const t0 = new Date();
    expect(await deliverStep(p, transports, { now: t0 })).toEqual({ delivered: 0, retrying: 1, dead: 0 });
    const limited = deliveryRows(p.sql)[0]!;
    expect(limited).toMatchObject({ channel: 'trading', status: 'pending', attempts: 1, last_error: 'slack: rate limited, retry after 3 s' });
    // Retry-After (3 s) is longer than the backoff (0.5 s): the next attempt waits for it.
    expect(Date.parse(limited.next_attempt_at!)).toBe(t0.getTime() + 3_000);
    expect(await deliverStep(p, transports, { now: later(t0, 2_000) })).toEqual({ delivered: 0, retrying: 0, dead: 0 });
    expect(api.calls).toHaveLength(1);
    expect(await deliverStep(p, transports, { now: later(t0, 3_000) })).toEqual({ delivered: 1, retrying: 0, dead: 0 });
    expect(deliveryRows(p.sql)[0]).toMatchObject({ status: 'delivered', attempts: 2, last_error: null });

    expect(api.calls).toHaveLength(2);
    const [first, second] = api.calls as [(typeof api.calls)[0], (typeof api.calls)[0]];
    expect(second.raw).toBe(first.raw);
    expect(second.method).toBe('chat.postMessage');
    expect(second.authorization).toBe(`Bearer ${TOKEN}`);
    expect(second.channel).toBe('#pm-alerts');
    expect(second.text).toContain(alert!.summary);
    expect(second.text).toContain('Edge: +4.0 pp → +12.3 pp (+8.3 pp)');
    const blocks = second.blocks as Array<{ type: string; text?: { text: string }; elements?: Array<{ text: string }>; fields?: Array<{ text: string }> }>;
    expect(blocks.map((b) => b.type)).toEqual(['header', 'section', 'section', 'context']);
    expect(blocks[0]?.text?.text).toBe('🚨 Fed decision in December 2026');
    expect(blocks[1]?.text?.text).toBe(second.text);
    expect(blocks[2]?.fields?.map((f) => f.text.split('\n')[0])).toContain('*Model vs market*');
    expect(blocks[3]?.elements?.[0]?.text).toContain(`id ${alert!.id}`);

    // Done: nothing more is sent later.
    await deliverStep(p, transports, { now: later(t0, 3_600_000) });
    expect(api.calls).toHaveLength(2);
  });

  it('ok: false with a permanent error is dead at once, with the reason', async () => {
    const api = (slack = await startSlackApi((_call, res) => slackJson(res, { ok: false, error: 'channel_not_found' })));
    const p = (pipeline = await startPipeline({ rules: RULES, transports: { slack: true, email: false } }));
    await p.poll();
    const [ticker] = p.sandbox.world.eventTickers() as [string];
    p.sandbox.world.updateEvent(ticker, { edge_pp: 4 });
    await p.poll();
    p.sandbox.world.updateEvent(ticker, { edge_pp: -20 });
    await p.poll();
    const transports = { slackToken: TOKEN, slackApiUrl: api.apiUrl };
    expect(await deliverStep(p, transports)).toEqual({ delivered: 0, retrying: 0, dead: 1 });
    expect(deliveryRows(p.sql)).toMatchObject([{ status: 'dead', attempts: 1, last_error: 'slack: channel_not_found' }]);
    await deliverStep(p, transports, { now: later(new Date(), 3_600_000) });
    expect(api.calls).toHaveLength(1);
  });
});
