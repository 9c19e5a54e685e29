// An SMTP server that greets and then goes silent, against the running daemon: the email channel
// waits on it, every other channel does not. Webhooks of alerts fired before and while the email
// is stuck arrive within seconds, and SIGTERM stops the daemon promptly.
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { startSandboxWithRules, type SandboxWithRules } from '../helpers/cli.ts';
import { eventsBaselineDone, startDaemonChild, type DaemonChild } from '../helpers/daemon.ts';
import { startStalledSmtp, startWebhookReceiver, type StalledSmtp, type WebhookReceiver } from '../helpers/receivers.ts';
import { waitFor } from '../helpers/wait.ts';

let scene: SandboxWithRules;
let sandbox: Sandbox;
let receiver: WebhookReceiver;
let smtp: StalledSmtp;
let daemon: DaemonChild | undefined;

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  smtp = await startStalledSmtp();
  scene = await startSandboxWithRules({
    sandbox: { apiKey: 'stall', events: 10, kpis: 2 },
    dirPrefix: 'edgewatch-smtp-stall-',
    rules: `channels:
  me: { type: email, to: [analyst@example.com] }
  hook: { type: webhook, url: "${receiver.url}" }
rules:
  - name: new-events
    source: events
    trigger: { type: new }
    notify: [me, hook]
`,
  });
  sandbox = scene.sandbox;
});

afterAll(async () => {
  await daemon?.kill();
  await smtp.close();
  await receiver.close();
  await scene.close();
});

const delivered = (tickers: string[]) => () => tickers.every((t) => receiver.requests.some((r) => r.json().entity === t));

it('delivers webhooks within seconds while every email waits on a silent SMTP server', { timeout: 120_000 }, async () => {
  const d = (daemon = await startDaemonChild({
    ...scene.env,
    EDGEWATCH_PORT: '0',
    EDGEWATCH_POLL_EVENTS: '1s',
    EDGEWATCH_POLL_KPIS: '1s',
    SMTP_URL: smtp.url,
  }));
  await eventsBaselineDone(d.url);

  // More emails than sends in flight per channel, all stuck on the server.
  const first = Array.from({ length: 12 }, () => sandbox.world.addEvent());
  await waitFor('the first webhooks', delivered(first), 10_000);
  await waitFor('emails stuck on the server', () => smtp.connections() > 0, 10_000);

  // Alerts fired while the email channel is still stuck go out on the webhook just as fast.
  const emailOutcomes = () => d.logs().filter((line) => line.channel === 'me' && line.outcome !== undefined);
  expect(emailOutcomes()).toEqual([]);
  const second = Array.from({ length: 5 }, () => sandbox.world.addEvent());
  await waitFor('the second webhooks', delivered(second), 10_000);

  const stop = await d.signal('SIGTERM');
  expect(stop.code).toBe(0);
  expect(stop.ms).toBeLessThan(10_000);
});
