// Two delivery passes at once (a `poll --once` beside a running daemon, say) never send one
// delivery twice: each claims its rows by their attempt count before sending.
import { afterEach, expect, it } from 'vitest';
import type { Channel } from '../../src/rules/index.ts';
import { deliverDue } from '../../src/notify/index.ts';
import { openStore, type Store } from '../../src/store/index.ts';
import { startPipeline, type Pipeline } from '../helpers/pipeline.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/receivers.ts';

let pipeline: Pipeline | undefined;
let second: Store | undefined;
let receiver: WebhookReceiver | undefined;
afterEach(async () => {
  await second?.close();
  await pipeline?.close();
  await receiver?.close();
  pipeline = undefined;
  second = undefined;
  receiver = undefined;
});

it('sends each due delivery once when two processes deliver at the same time', async () => {
  const p = (pipeline = await startPipeline({
    rules: `
channels:
  hook: { type: console }
rules:
  - name: new-events
    source: events
    trigger: { type: new }
    notify: [hook]
`,
  }));
  await p.poll();
  for (let i = 0; i < 30; i++) p.sandbox.world.addEvent();
  expect((await p.poll()).alerts).toHaveLength(30);

  const r = (receiver = await startWebhookReceiver((_request, res) => void setTimeout(() => res.end('ok'), 20)));
  const channels = new Map<string, Channel>([['hook', { type: 'webhook', name: 'hook', url: r.url, headers: {} }]]);
  const send = async (_channel: Channel, message: Parameters<Parameters<typeof deliverDue>[1]['send']>[1]) => {
    const id = message.kind === 'alert' ? message.alert.id : 'other';
    const response = await fetch(r.url, { method: 'POST', headers: { 'webhook-id': id }, body: '{}' });
    await response.text();
    return { ok: true as const };
  };
  second = await openStore(p.dbPath);
  const [a, b] = await Promise.all([
    deliverDue(p.store, { channels, send, now: () => new Date(), concurrencyPerChannel: 4 }),
    deliverDue(second, { channels, send, now: () => new Date(), concurrencyPerChannel: 4 }),
  ]);
  expect(a.delivered + b.delivered).toBe(30);
  const received = r.requests.map((request) => String(request.headers['webhook-id']));
  expect(received).toHaveLength(30);
  expect(new Set(received).size).toBe(30);
});
