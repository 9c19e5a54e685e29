// Sink chaos: the webhook receivers, the Slack stand-in and the SMTP server fail for a while (5xx,
// ok: false, 421, connection refused while the server is closed) and recover. The outbox, driven by
// an advancing clock and a small retry policy, delivers every alert once to each of them; a sink
// that never recovers ends dead and visible, and the others are unaffected.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { deliverDue } from '../../src/notify/index.ts';
import { loadTemplates } from '../../src/render/index.ts';
import { createChannelSender, GROUPING_KINDS } from '../../src/service/senders.ts';
import { listAlerts } from '../../src/store/index.ts';
import { TEMPLATES_DIR } from '../helpers/pipeline.ts';
import { mulberry32, startRig, type Rig } from './harness.ts';

const SECRET = `whsec_${Buffer.from('fault-suite-secret-0123456789abcdef').toString('base64')}`;

type Mode = 'up' | 'error' | 'closed';

/** A server that can be made to fail, closed (connection refused) and reopened on its port. */
interface Sink {
  mode: Mode;
  port: number;
  setMode(mode: Mode): Promise<void>;
  close(): Promise<void>;
}

function reopenable(listen: (port: number) => Promise<number>, close: () => Promise<void>): Promise<Sink> {
  return listen(0).then((port) => {
    const sink: Sink = {
      mode: 'up',
      port,
      async setMode(mode) {
        if (mode === sink.mode) return;
        if (mode === 'closed') await close();
        else if (sink.mode === 'closed') await listen(port);
        sink.mode = mode;
      },
      close: async () => {
        if (sink.mode !== 'closed') await close();
      },
    };
    return sink;
  });
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });
}

/** An HTTP sink: `handle` answers while up; `failure` while in error mode. */
async function httpSink(
  handle: (req: IncomingMessage, body: string, res: ServerResponse) => void,
  failure: (res: ServerResponse, n: number) => void,
): Promise<Sink> {
  let server: Server | undefined;
  let failures = 0;
  const sinkRef: { sink?: Sink } = {};
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const s = createServer((req, res) => {
        void readBody(req).then((body) => {
          if (sinkRef.sink?.mode === 'error') return failure(res, failures++);
          try {
            handle(req, body, res);
          } catch (error) {
            // A malformed request is recorded and refused (4xx: dead, which the test would see).
            protocolErrors.push((error as Error).message);
            json(res, 400, { error: 'bad request' });
          }
        });
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve((s.address() as AddressInfo).port));
      server = s;
    });
  const close = () =>
    new Promise<void>((resolve) => {
      const s = server!;
      s.closeAllConnections();
      s.close(() => resolve());
    });
  sinkRef.sink = await reopenable(listen, close);
  return sinkRef.sink;
}

/** Requests a sink could not accept (bad signature, no id): must stay empty. */
const protocolErrors: string[] = [];

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
  return httpSink(
    (req, body, res) => {
      const id = String(req.headers['webhook-id']);
      ledger.attempt(id);
      if (verify) new Webhook(SECRET).verify(body, req.headers as Record<string, string>);
      if (JSON.parse(body).id !== id) throw new Error('body id differs from webhook-id');
      ledger.accept(id);
      res.writeHead(204).end();
    },
    (res, n) => (n % 3 === 2 ? json(res, 429, {}, { 'retry-after': '1' }) : json(res, n % 2 ? 502 : 503, { error: 'down' })),
  );
}

async function slackSink(ledger: Ledger): Promise<Sink> {
  return httpSink(
    (_req, body, res) => {
      // The alert id is in the message's context block.
      const blocks = new URLSearchParams(body).get('blocks') ?? '';
      const ids = [...blocks.matchAll(/\bid ([0-9A-HJKMNP-TV-Z]{26})\b/g)].map((m) => m[1]!);
      if (ids.length !== 1) throw new Error(`a Slack message should carry one alert id: ${blocks}`);
      ledger.accept(ids[0]!);
      json(res, 200, { ok: true, channel: 'C1', ts: '1.1' });
    },
    (res, n) => (n % 2 ? json(res, 500, { ok: false, error: 'internal_error' }) : json(res, 200, { ok: false, error: 'service_unavailable' })),
  );
}

async function smtpSink(ledger: Ledger): Promise<Sink> {
  let server: SMTPServer | undefined;
  const sinkRef: { sink?: Sink } = {};
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const s = new SMTPServer({
        disabledCommands: ['STARTTLS', 'AUTH'],
        logger: false,
        onConnect(_session, callback) {
          if (sinkRef.sink?.mode !== 'error') return callback();
          const error = Object.assign(new Error('Service not available, try later'), { responseCode: 421 });
          callback(error);
        },
        onData(stream, _session, callback) {
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            const head = Buffer.concat(chunks).toString('utf8').split(/\r?\n\r?\n/)[0] ?? '';
            const id = /^message-id:\s*(.+)$/im.exec(head.replace(/\r?\n[ \t]+/g, ' '))?.[1]?.trim();
            if (id === undefined) return callback(new Error('no Message-ID'));
            ledger.accept(id);
            callback();
          });
        },
      });
      s.server.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve((s.server.address() as AddressInfo).port));
      server = s;
    });
  const close = () => new Promise<void>((resolve) => server!.close(() => resolve()));
  sinkRef.sink = await reopenable(listen, close);
  return sinkRef.sink;
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
      smtp: await smtpSink(mail),
    };
    for (const sink of Object.values(sinks)) cleanup.push(() => sink.close());
    const rules = `
channels:
  team-slack: { type: slack, channel: "#alerts" }
  mail: { type: email, to: [analyst@example.com] }
  hook-a: { type: webhook, url: "http://127.0.0.1:${sinks.hookA.port}/hooks", secret: "${SECRET}" }
  hook-b: { type: webhook, url: "http://127.0.0.1:${sinks.hookB.port}/hooks" }
  hook-dead: { type: webhook, url: "http://127.0.0.1:${sinks.dead.port}/hooks" }
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
        slackApiUrl: `http://127.0.0.1:${sinks.slack.port}/api/`,
        smtpUrl: `smtp://127.0.0.1:${sinks.smtp.port}`,
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
