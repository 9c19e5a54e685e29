// Channels are delivered independently: an SMTP server that greets and then goes silent holds up
// only the email channel; the webhooks of the same alerts go at once.
import { afterEach, describe, expect, it } from 'vitest';
import { deliverStep, deliveryRows } from '../helpers/delivery.ts';
import { startPipeline, type Pipeline } from '../helpers/pipeline.ts';
import { startStalledSmtp, startWebhookReceiver, type StalledSmtp, type WebhookReceiver } from '../helpers/receivers.ts';
import { waitFor } from '../helpers/wait.ts';

const rules = (url: string) => `
channels:
  me: { type: email, to: [analyst@example.com] }
  hook: { type: webhook, url: "${url}" }
rules:
  - name: new-events
    source: events
    trigger: { type: new }
    notify: [me, hook]
`;

let pipeline: Pipeline | undefined;
let receiver: WebhookReceiver | undefined;
let smtp: StalledSmtp | undefined;

afterEach(async () => {
  await smtp?.close();
  await pipeline?.close();
  await receiver?.close();
  pipeline = undefined;
  receiver = undefined;
  smtp = undefined;
});

describe('delivery lanes', () => {
  it('a stalled SMTP server holds up only the email channel: every webhook of the pass goes within seconds', { timeout: 90_000 }, async () => {
    const stalled = (smtp = await startStalledSmtp());
    const r = (receiver = await startWebhookReceiver());
    const p = (pipeline = await startPipeline({ rules: rules(r.url), transports: { slack: false, email: true } }));
    await p.poll();
    for (let i = 0; i < 10; i++) p.sandbox.world.addEvent();
    expect((await p.poll()).alerts).toHaveLength(10);

    // More stalled emails than sends in flight per channel: before lanes, they took every slot.
    const pass = deliverStep(p, { smtpUrl: stalled.url });
    await waitFor('all 10 webhooks', () => r.requests.length === 10, 10_000);
    expect(stalled.connections()).toBeGreaterThan(0);
    const webhookRows = () => deliveryRows(p.sql).filter((row) => row.channel === 'hook');
    await waitFor('the webhook deliveries recorded', () => webhookRows().every((row) => row.status === 'delivered'), 5_000);

    // The server goes away: the stalled emails fail and stay pending for a retry.
    await stalled.close();
    smtp = undefined;
    expect(await pass).toEqual({ delivered: 10, retrying: 10, dead: 0 });
    expect(deliveryRows(p.sql).filter((row) => row.channel === 'me').map((row) => row.status)).toEqual(Array(10).fill('pending'));
  });
});
