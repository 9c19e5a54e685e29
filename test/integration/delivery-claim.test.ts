// Two delivery passes at once (a `poll --once` beside a running daemon, say) never send one
// delivery twice: each claims its rows by their attempt count before sending.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import type { Channel } from '../../src/rules/index.ts';
import { deliverDue } from '../../src/notify/index.ts';
import { openStore, type Store } from '../../src/store/index.ts';
import { startPipeline, type Pipeline } from '../helpers/pipeline.ts';

let pipeline: Pipeline | undefined;
let second: Store | undefined;
afterEach(async () => {
  await second?.close();
  await pipeline?.close();
  pipeline = undefined;
  second = undefined;
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

  const received: string[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    received.push(String(req.headers['webhook-id']));
    req.resume();
    req.on('end', () => setTimeout(() => res.end('ok'), 20));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const channels = new Map<string, Channel>([['hook', { type: 'webhook', name: 'hook', url, headers: {} }]]);
  const send = async (_channel: Channel, message: Parameters<Parameters<typeof deliverDue>[1]['send']>[1]) => {
    const id = message.kind === 'alert' ? message.alert.id : 'other';
    const response = await fetch(url, { method: 'POST', headers: { 'webhook-id': id }, body: '{}' });
    await response.text();
    return { ok: true as const };
  };
  second = await openStore(p.dbPath);
  try {
    const [a, b] = await Promise.all([
      deliverDue(p.store, { channels, send, now: () => new Date(), concurrencyPerChannel: 4 }),
      deliverDue(second, { channels, send, now: () => new Date(), concurrencyPerChannel: 4 }),
    ]);
    expect(a.delivered + b.delivered).toBe(30);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  expect(received).toHaveLength(30);
  expect(new Set(received).size).toBe(30);
});
