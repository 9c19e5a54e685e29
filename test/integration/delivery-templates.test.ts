// A template that fails on real alerts (here: runs past its time limit) through the whole pipeline:
// the delivery is dead at the first attempt with the template's error, and the rule's other
// channels are delivered as usual.
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadTemplates } from '../../src/render/index.ts';
import { deliverStep, deliveryRows, later } from '../helpers/delivery.ts';
import { tempDir } from '../helpers/files.ts';
import { startPipeline, type Pipeline } from '../helpers/pipeline.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/receivers.ts';

// Heavy only for real alerts: the sample alert that validation renders takes the other branch.
const BURNER = "{% if alert.rule != 'sample-rule' %}\n{% for i in (1..3000) %}{% for j in (1..3000) %}x{% endfor %}{% endfor %}{% endif %}";

const rules = (url: string) => `
channels:
  screen: { type: console }
  hook: { type: webhook, url: ${url} }
rules:
  - name: edge-over-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, abs: true }
    template: burn
    notify: [screen, hook]
`;

let pipeline: Pipeline | undefined;
let receiver: WebhookReceiver | undefined;
let dir: string | undefined;

afterEach(async () => {
  await pipeline?.close();
  await receiver?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  pipeline = undefined;
  receiver = undefined;
  dir = undefined;
});

describe('a template that fails on a real alert', () => {
  it('makes that delivery dead at the first attempt, with the template error; the webhook is delivered', async () => {
    dir = tempDir('edgewatch-burn-');
    writeFileSync(path.join(dir, 'burn.text.liquid'), BURNER);
    const templates = await loadTemplates(dir);
    const r = (receiver = await startWebhookReceiver());
    const p = (pipeline = await startPipeline({ rules: rules(r.url), templates: new Set(['burn']) }));
    await p.poll();
    const [ticker] = p.sandbox.world.eventTickers() as [string];
    p.sandbox.world.updateEvent(ticker, { edge_pp: 4 });
    await p.poll();
    p.sandbox.world.updateEvent(ticker, { edge_pp: 15 });
    expect((await p.poll()).alerts).toHaveLength(1);

    const printed: string[] = [];
    const at = new Date();
    expect(await deliverStep(p, {}, { now: at, templates, out: (line) => printed.push(line) })).toEqual({ delivered: 1, retrying: 0, dead: 1 });
    expect(printed).toEqual([]);
    expect(r.requests).toHaveLength(1);
    const rows = deliveryRows(p.sql).map(({ channel, status, attempts, last_error }) => ({ channel, status, attempts, last_error }));
    expect(rows).toEqual([
      { channel: 'screen', status: 'dead', attempts: 1, last_error: expect.stringMatching(/^template .*burn\.text\.liquid:2:\d+: template render limit exceeded$/) },
      { channel: 'hook', status: 'delivered', attempts: 1, last_error: null },
    ]);
    expect(rows[0]!.last_error).toContain(path.join(dir, 'burn.text.liquid'));

    // Nothing is left to retry, however long one waits.
    expect(await deliverStep(p, {}, { now: later(at, 3_600_000), templates })).toEqual({ delivered: 0, retrying: 0, dead: 0 });
  });
});
