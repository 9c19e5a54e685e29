// Sink chaos: the webhook receivers, the Slack stand-in and the SMTP server fail for a while (5xx,
// ok: false, 421, connection refused while the server is closed) and recover. The outbox, driven by
// an advancing clock and a small retry policy, delivers every alert once to each of them; a sink
// that never recovers ends dead and visible, and the others are unaffected.
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { deliverDue } from '../../src/notify/index.ts';
import { loadTemplates } from '../../src/render/index.ts';
import { createChannelSender, GROUPING_KINDS } from '../../src/service/senders.ts';
import { listAlerts } from '../../src/store/index.ts';
import { TEMPLATES_DIR } from '../helpers/pipeline.ts';
import { mailHeader, startSlackApi, startSmtp, startWebhookReceiver, verifyWebhook, type ReceivedMail } from '../helpers/receivers.ts';
import { mulberry32, startRig, type Rig } from './harness.ts';

const SECRET = `whsec_${Buffer.from('fault-suite-secret-0123456789abcdef').toString('base64')}`;

type Mode = 'up' | 'error' | 'closed';

/** A stand-in that can be made to fail, closed (connection refused) and reopened on its port. */
interface Sink {
  mode: Mode;
  /** Where the sender reaches it (a webhook url, SLACK_API_URL, SMTP_URL). */
  url: string;
  setMode(mode: Mode): Promise<void>;
  close(): Promise<void>;
}

function withModes(server: { close(): Promise<void>; reopen(): Promise<void> }, url: string): Sink {
  const sink: Sink = {
    mode: 'up',
    url,
    async setMode(mode) {
      if (mode === sink.mode) return;
      if (mode === 'closed') await server.close();
      else if (sink.mode === 'closed') await server.reopen();
      sink.mode = mode;
    },
    close: () => server.close(),
  };
  return sink;
}

/** Requests a sink could not accept (bad signature, no id): must stay empty. */
const protocolErrors: string[] = [];

/** A reply that answers with `handle` while the sink is up and with `failure` in error mode. */
function failing<Request>(sink: Sink, handle: (request: Request, res: ServerResponse) => void, failure: (res: ServerResponse, n: number) => void) {
  let failures = 0;
  return (request: Request, res: ServerResponse): void => {
    if (sink.mode === 'error') return failure(res, failures++);
    try {
      handle(request, res);
    } catch (error) {
      // A malformed request is recorded and refused (4xx: dead, which the test would see).
      protocolErrors.push((error as Error).message);
      json(res, 400, { error: 'bad request' });
    }
  };
}

/** Counts of accepted requests by idempotency key, and every key seen in any request. */
class Ledger {
  readonly accepted = new Map<string, number>();
  readonly attempts = new Map<string, number>();
  accept(key: string): void {
    this.accepted.set(key, (this.accepted.get(key) ?? 0) + 1);
  }
  attempt(key: string): void {
    this.attempts.set(key, (this.attempts.get(key) ?? 0) + 1);
  }
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

async function webhookSink(ledger: Ledger, verify: boolean): Promise<Sink> {
  const receiver = await startWebhookReceiver();
  const sink = withModes(receiver, receiver.url);
  receiver.reply = failing(
    sink,
    (request, res) => {
      const id = String(request.headers['webhook-id']);
      ledger.attempt(id);
      if (verify) verifyWebhook(request, SECRET);
      if (request.json().id !== id) throw new Error('body id differs from webhook-id');
      ledger.accept(id);
      res.writeHead(204).end();
    },
    (res, n) => (n % 3 === 2 ? json(res, 429, {}, { 'retry-after': '1' }) : json(res, n % 2 ? 502 : 503, { error: 'down' })),
  );
  return sink;
}

async function slackSink(ledger: Ledger): Promise<Sink> {
  const api = await startSlackApi();
  const sink = withModes(api, api.apiUrl);
  api.reply = failing(
    sink,
    (call, res) => {
      // The alert id is in the message's context block.
      const blocks = new URLSearchParams(call.raw).get('blocks') ?? '';
      const ids = [...blocks.matchAll(/\bid ([0-9A-HJKMNP-TV-Z]{26})\b/g)].map((m) => m[1]!);
      if (ids.length !== 1) throw new Error(`a Slack message should carry one alert id: ${blocks}`);
      ledger.accept(ids[0]!);
      json(res, 200, { ok: true, channel: 'C1', ts: '1.1' });
    },
    (res, n) => (n % 2 ? json(res, 500, { ok: false, error: 'internal_error' }) : json(res, 200, { ok: false, error: 'service_unavailable' })),
  );
  return sink;
}

/** An SMTP server that refuses connections with 421 in error mode; what it accepted is in `mails`. */
async function smtpSink(): Promise<Sink & { mails: ReceivedMail[] }> {
  const smtp = await startSmtp({
    disabledCommands: ['STARTTLS', 'AUTH'],
    // Runs on a connection, after `sink` below is set.
    onConnect(_session, callback) {
      if (sink.mode !== 'error') return callback();
      callback(Object.assign(new Error('Service not available, try later'), { responseCode: 421 }));
    },
  });
  const sink = withModes(smtp, smtp.url);
  return Object.assign(sink, { mails: smtp.mails });
}

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn();
  cleanup = [];
});

describe('sink chaos', () => {
  it('delivers every alert once to each sink that recovers; a sink that never does ends dead', { timeout: 60_000 }, async () => {
    const hookA = new Ledger();
    const hookB = new Ledger();
    const dead = new Ledger();
    const slack = new Ledger();
    const mail = new Ledger();
    const sinks = {
      hookA: await webhookSink(hookA, true),
      hookB: await webhookSink(hookB, false),
      dead: await webhookSink(dead, false),
      slack: await slackSink(slack),
      smtp: await smtpSink(),
    };
    for (const sink of Object.values(sinks)) cleanup.push(() => sink.close());
    const rules = `
channels:
  team-slack: { type: slack, channel: "#alerts" }
  mail: { type: email, to: [analyst@example.com] }
  hook-a: { type: webhook, url: "${sinks.hookA.url}", secret: "${SECRET}" }
  hook-b: { type: webhook, url: "${sinks.hookB.url}" }
  hook-dead: { type: webhook, url: "${sinks.dead.url}" }
rules:
  - name: edge-over-10
    source: events
    trigger: { type: crosses, field: edge_pp, above: 10, abs: true }
    notify: [team-slack, mail, hook-a, hook-dead]
  - name: edge-moves-3
    source: events
    trigger: { type: moves, field: edge_pp, by: 3 }
    notify: [hook-b, mail]
`;
    const rig: Rig = await startRig({ rules, sandbox: { seed: 3, events: 80, kpis: 5 }, transports: { slack: true, email: true } });
    cleanup.push(() => rig.close());
    const send = createChannelSender({
      config: {
        slackToken: 'xoxb-fault-suite',
        slackApiUrl: sinks.slack.url,
        smtpUrl: sinks.smtp.url,
        emailFrom: 'edgewatch@faults.example.com',
      },
      templates: await loadTemplates(TEMPLATES_DIR),
      rules: rig.ruleSet.rules,
      out: () => {},
      webhookTimeoutMs: 2000,
    });
    const random = mulberry32(42);
    let clock = rig.sandbox.now().getTime();
    const deliver = () =>
      deliverDue(rig.store, {
        channels: rig.ruleSet.channels,
        send,
        now: () => new Date(clock),
        retry: { attempts: 10, baseMs: 1000, maxMs: 16_000 },
        groupKinds: GROUPING_KINDS,
        groupAbove: 1000,
        random,
      });


    // Alerts in two waves: the first while every sink is failing, the second during recovery.
    await rig.poll();
    const movers = rig.sandbox.world.eventTickers().slice(0, 24);
    const wave = async (from: number, to: number) => {
      rig.sandbox.advance(1);
      for (const t of movers.slice(from, to)) rig.sandbox.world.updateEvent(t, { edge_pp: 4 });
      await rig.poll();
      rig.sandbox.advance(1);
      for (const t of movers.slice(from, to)) rig.sandbox.world.updateEvent(t, { edge_pp: 14 });
      expect((await rig.poll()).failures).toEqual([]);
      clock = Math.max(clock, rig.sandbox.now().getTime());
    };

    await sinks.hookA.setMode('error');
    await sinks.hookB.setMode('closed');
    await sinks.dead.setMode('error');
    await sinks.slack.setMode('error');
    await sinks.smtp.setMode('closed');
    await wave(0, 12);
    // The sandbox clock and the outbox clock advance together from here; `t` is seconds since.
    const start = clock;
    let shift = 0;
    for (let t = 0; t <= 200; t += 1) {
      clock = start + t * 1000 + shift;
      if (t === 20) {
        await sinks.smtp.setMode('error'); // reopened, answering 421
        await sinks.hookB.setMode('error');
      }
      if (t === 25) {
        await wave(12, 24);
        shift = clock - (start + t * 1000);
      }
      if (t === 30) await sinks.slack.setMode('up');
      if (t === 35) await sinks.hookA.setMode('up');
      if (t === 40) await sinks.smtp.setMode('up');
      if (t === 45) await sinks.hookB.setMode('up');
      await deliver();
    }

    const alerts = rig.sql.prepare<[], { id: string; rule: string; entity: string }>('SELECT id, rule, entity FROM alerts').all();
    const crossings = alerts.filter((a) => a.rule === 'edge-over-10');
    const moves = alerts.filter((a) => a.rule === 'edge-moves-3');
    expect(crossings.length).toBeGreaterThanOrEqual(24);
    expect(moves.length).toBeGreaterThanOrEqual(24);

    // Each recovering sink accepted each of its alerts exactly once.
    const once = (ids: string[]) => new Map(ids.map((id) => [id, 1]));
    expect(hookA.accepted).toEqual(once(crossings.map((a) => a.id)));
    expect(hookB.accepted).toEqual(once(moves.map((a) => a.id)));
    expect(slack.accepted).toEqual(once(crossings.map((a) => a.id)));
    for (const { raw } of sinks.smtp.mails) {
      const id = mailHeader(raw, 'Message-ID');
      if (id === undefined) protocolErrors.push('an email without a Message-ID');
      else mail.accept(id);
    }
    expect(protocolErrors).toEqual([]);
    const messageIds = [...mail.accepted.keys()];
    expect(mail.accepted.size).toBe(crossings.length + moves.length);
    for (const a of [...crossings, ...moves]) expect(messageIds.filter((m) => m.includes(a.id.toLowerCase()) || m.includes(a.id))).toHaveLength(1);
    expect([...mail.accepted.values()].every((n) => n === 1)).toBe(true);

    // Statuses: delivered everywhere but the dead sink, which shows its last error.
    const rows = rig.sql
      .prepare<[], { channel: string; status: string; attempts: number; last_error: string | null }>('SELECT channel, status, attempts, last_error FROM deliveries')
      .all();
    const failing = rows.filter((r) => r.channel === 'hook-dead');
    expect(failing).toHaveLength(crossings.length);
    for (const r of failing) {
      expect(r.status).toBe('dead');
      expect(r.attempts).toBe(10);
      expect(r.last_error).toMatch(/429|50[23]/);
    }
    for (const r of rows.filter((x) => x.channel !== 'hook-dead')) expect(r).toMatchObject({ status: 'delivered' });
    // Retries happened: the failing sinks were tried more than once for the same ids.
    expect(Math.max(...rows.filter((r) => r.channel !== 'hook-dead').map((r) => r.attempts))).toBeGreaterThan(3);
    expect(dead.accepted.size).toBe(0);

    // Visible as `alerts --json` shows it.
    const listed = await listAlerts(rig.store, 100);
    const shown = listed.filter((a) => a.rule === 'edge-over-10').flatMap((a) => a.deliveries.filter((d) => d.channel === 'hook-dead'));
    expect(shown).toHaveLength(crossings.length);
    expect(shown.every((d) => d.status === 'dead' && typeof d.last_error === 'string' && d.last_error.length > 0)).toBe(true);
  });
});
