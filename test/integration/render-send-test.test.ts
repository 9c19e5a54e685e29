// `render` and `send-test` as users call them: each channel's message printed without sending, and a
// message marked as a test sent through the real transports to the Slack stand-in, an SMTP server
// and a webhook receiver that verifies the signature.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startSandboxWithRules, type SandboxWithRules } from '../helpers/cli.ts';
import {
  mailHeader,
  mailPart,
  slackJson,
  slackOk,
  startSlackApi,
  startSmtp,
  startWebhookReceiver,
  verifyWebhook,
  type SlackApi,
  type SmtpReceiver,
  type WebhookReceiver,
} from '../helpers/receivers.ts';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

let scene: SandboxWithRules;
let slack: SlackApi;
let smtp: SmtpReceiver;
let hooks: WebhookReceiver;
let env: Record<string, string>;

beforeAll(async () => {
  slack = await startSlackApi();
  smtp = await startSmtp();
  // A receiver as users write one: it verifies the Standard Webhooks signature, 401 when it does not hold.
  hooks = await startWebhookReceiver((request, res) => {
    try {
      verifyWebhook(request, SECRET);
      res.writeHead(204).end();
    } catch {
      res.writeHead(401).end();
    }
  });
  const rules = `
channels:
  screen: { type: console }
  trading: { type: slack, channel: "#pm-alerts" }
  me: { type: email, to: [analyst@example.com] }
  pipeline: { type: webhook, url: "${hooks.url}", secret: "\${HOOK_SECRET}" }
  wrong-secret: { type: webhook, url: "${hooks.url}", secret: "whsec_${randomBytes(32).toString('base64')}" }
rules:
  - name: edge-over-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, abs: true }
    notify: [screen, trading, me, pipeline]
    severity: warning
  - name: edge-over-30
    source: events
    trigger: { type: crosses, field: edge_pp, above: 30 }
    notify: [screen]
`;
  scene = await startSandboxWithRules({ rules, sandbox: { seed: 3 } });
  env = { ...scene.env, SLACK_BOT_TOKEN: 'xoxb-test-token', SLACK_API_URL: slack.apiUrl, SMTP_URL: smtp.url, HOOK_SECRET: SECRET };
});

afterAll(async () => {
  await scene.close();
  await slack.close();
  await smtp.close();
  await hooks.close();
});

/** The sections of `render`'s output, by heading (`== name (kind ...)`). */
function sections(stdout: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of stdout.split('\n')) {
    const heading = /^== (\S+) /.exec(line);
    if (heading) found.set(heading[1]!, (current = []));
    else current?.push(line);
  }
  return found;
}

/** The lines after `label:` up to the next of `labels`. */
function part(lines: string[], label: string, labels: string[]): string {
  const start = lines.indexOf(`${label}:`);
  const rest = lines.slice(start + 1);
  const end = rest.findIndex((line) => labels.some((l) => line === `${l}:`));
  return (end < 0 ? rest : rest.slice(0, end)).join('\n').trim();
}

describe('render', () => {
  it('prints each channel\'s message for a sample: console line, Slack text and blocks, email subject, text and HTML, webhook body', async () => {
    const result = await runCli(['render', 'edge-over-10'], env);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')[0]).toBe('# edge-over-10: a sample events snapshot (give --entity KEY for a stored one)');
    const by = sections(result.stdout);
    expect([...by.keys()]).toEqual(['screen', 'trading', 'me', 'pipeline']);
    expect(by.get('screen')!.filter(Boolean)).toEqual(['[warning] edge-over-10 KXSAMPLE-26JAN: Sample event: edge +12.3 pp crossed above 10 pp']);

    const slackLines = by.get('trading')!;
    expect(part(slackLines, 'text', ['blocks'])).toMatch(/^\*Sample event: edge \+12\.3 pp crossed above 10 pp\*\n• Edge: \+8\.1 pp → \+12\.3 pp \(\+4\.2 pp\)/);
    const blocks = JSON.parse(part(slackLines, 'blocks', [])) as Array<{ type: string }>;
    expect(blocks[0]).toEqual({ type: 'header', text: { type: 'plain_text', text: '⚠️ Sample event', emoji: true } });
    expect(blocks.map((b) => b.type)).toEqual(['header', 'section', 'section', 'context']);

    const mail = by.get('me')!;
    expect(mail[0]).toBe('subject: [WARNING] Sample event: edge +12.3 pp crossed above 10 pp');
    expect(part(mail, 'text', ['html'])).toContain('Edge: +8.1 pp -> +12.3 pp (+4.2 pp)');
    expect(part(mail, 'html', [])).toMatch(/^<!doctype html>/);
    expect(part(mail, 'html', [])).toContain('A <strong>sample</strong> summary.');

    const body = JSON.parse(part(by.get('pipeline')!, 'body', [])) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['version', 'type', 'id', 'rule', 'severity', 'source', 'entity', 'trigger', 'fired_at', 'summary', 'changes', 'current', 'explanation']);
    expect(body).toMatchObject({ version: 1, type: 'alert', rule: 'edge-over-10', entity: 'KXSAMPLE-26JAN' });
    // The trigger's field first, then the other changed fields.
    expect((body.changes as unknown[])[0]).toEqual({ field: 'edge_pp', from: 8.1, to: 12.3 });
    expect(result.stdout).not.toContain(SECRET);
    // Nothing was sent.
    expect(slack.calls).toHaveLength(0);
    expect(smtp.mails).toHaveLength(0);
    expect(hooks.requests).toHaveLength(0);
  });

  it('moves the sample so that the rule\'s own trigger fires on it: a threshold the sample stays under is crossed', async () => {
    const result = await runCli(['render', 'edge-over-30', '--channel', 'screen'], env);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Sample event: edge +31.5 pp crossed above 30 pp');
  });

  it('prints one channel for an entity\'s latest stored snapshot; an unknown entity exits 1', async () => {
    expect((await runCli(['poll', '--once'], env)).code).toBe(0);
    const ticker = scene.sandbox.world.eventTickers()[0]!;
    const result = await runCli(['render', 'edge-over-10', '--entity', ticker, '--channel', 'pipeline'], env);
    expect(result.code).toBe(0);
    const by = sections(result.stdout);
    expect(result.stdout.split('\n')[0]).toMatch(new RegExp(`^# edge-over-10: events ${ticker}, its latest snapshot \\(stored \\S+\\)$`));
    expect([...by.keys()]).toEqual(['pipeline']);
    const body = JSON.parse(part(by.get('pipeline')!, 'body', [])) as { entity: string; current: { event_ticker: string } };
    expect(body.entity).toBe(ticker);
    expect(body.current.event_ticker).toBe(ticker);

    const unknown = await runCli(['render', 'edge-over-10', '--entity', 'KXNOSUCH'], env);
    expect(unknown).toMatchObject({ code: 1, stderr: 'edgewatch render: unknown entity KXNOSUCH: no events snapshot of it is stored\n' });
  });
});

describe('send-test', () => {
  it('posts one message marked as a test to Slack; exit 1 with the error when Slack refuses', async () => {
    const result = await runCli(['send-test', 'trading'], env);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^edgewatch send-test: trading \(slack\): delivered test message \w{26}\n$/);
    expect(slack.calls).toHaveLength(1);
    expect(slack.calls[0]).toMatchObject({ method: 'chat.postMessage', channel: '#pm-alerts', authorization: 'Bearer xoxb-test-token' });
    expect(slack.calls[0]!.text).toContain('[TEST] edgewatch send-test: channel trading is set up');

    slack.reply = (_call, res) => slackJson(res, { ok: false, error: 'channel_not_found' });
    try {
      const refused = await runCli(['send-test', 'trading'], env);
      expect(refused).toMatchObject({ code: 1, stdout: '', stderr: 'edgewatch send-test: trading: not delivered: slack: channel_not_found\n' });
    } finally {
      slack.reply = slackOk;
    }
  });

  it('sends one test email over SMTP', async () => {
    const result = await runCli(['send-test', 'me'], env);
    expect(result.code).toBe(0);
    expect(smtp.mails).toHaveLength(1);
    const mail = smtp.mails[0]!;
    expect(mail.to).toEqual(['analyst@example.com']);
    expect(mailHeader(mail.raw, 'Subject')).toBe('[INFO] [TEST] edgewatch send-test: channel me is set up; this is a test message, not an alert');
    expect(mailPart(mail.raw, 'text/plain')).toContain('this is a test message, not an alert');
  });

  it('signs the test webhook so that a verifying receiver accepts it; a wrong secret is refused, exit 1', async () => {
    const result = await runCli(['send-test', 'pipeline'], env);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(hooks.requests).toHaveLength(1);
    const payload = verifyWebhook(hooks.requests[0]!, SECRET) as Record<string, unknown>;
    expect(payload).toMatchObject({ version: 1, type: 'test', rule: 'edgewatch-send-test', id: hooks.requests[0]!.headers['webhook-id'] });
    expect(result.stdout).not.toContain(SECRET);

    const refused = await runCli(['send-test', 'wrong-secret'], env);
    expect(refused).toMatchObject({ code: 1, stdout: '', stderr: 'edgewatch send-test: wrong-secret: not delivered: webhook: HTTP 401\n' });
  });

  it('names an unknown channel, or why a channel is not valid, and exits 1', async () => {
    const unknown = await runCli(['send-test', 'tradng'], env);
    expect(unknown).toMatchObject({ code: 1, stderr: 'edgewatch send-test: unknown channel tradng (did you mean trading?)\n' });
    const unconfigured = await runCli(['send-test', 'trading'], { ...env, SLACK_BOT_TOKEN: '' });
    expect(unconfigured.code).toBe(1);
    expect(unconfigured.stderr).toMatch(/rules\.yaml:\d+:\d+: channel "trading": slack needs SLACK_BOT_TOKEN\nedgewatch send-test: channel trading is not valid\n$/);
  });
});
