// The outbox worker: sends what is due (alert deliveries, storms grouped per channel, closed digest
// batches) and records every attempt. Each channel is a lane of its own, with bounded concurrency,
// so a channel whose server stalls holds up only itself. At-least-once with a stable id: the
// attempt is counted before the send, so a crash in between leaves it pending and the next process
// sends it again with the same id.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Alert, DeliveryOutcome } from '../core/types.ts';
import type { Channel } from '../rules/index.ts';
import type { DigestMessage } from '../render/index.ts';
import { ALERT_CURRENT, type AlertsTable, type Store } from '../store/index.ts';

/** What one send carries: one alert, a storm of alerts for one channel, or a digest batch. */
export type OutgoingMessage =
  | { kind: 'alert'; alert: Alert }
  | { kind: 'group'; alerts: Alert[] }
  | { kind: 'digest'; digest: DigestMessage };

export type SendToChannel = (channel: Channel, message: OutgoingMessage) => Promise<DeliveryOutcome>;

export interface RetryPolicy {
  attempts: number;
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 10, baseMs: 30_000, maxMs: 3_600_000 };

export interface DeliverOptions {
  channels: ReadonlyMap<string, Channel>;
  send: SendToChannel;
  now: () => Date;
  retry?: RetryPolicy;
  /** Sends in flight at once to one channel (channels are sent to side by side). */
  concurrencyPerChannel?: number;
  /**
   * Channels that another pass of this process is still sending to, shared by the passes: this
   * pass leaves them to it, and marks its own channels here while it sends to them.
   */
  busyChannels?: Set<string>;
  /** Once true, no further send starts (what is left stays due for the next pass or process). */
  stopping?: () => boolean;
  /** More than this many alerts due for one channel of a grouping kind go as one message. */
  groupAbove?: number;
  groupKinds?: ReadonlySet<Channel['type']>;
  random?: () => number;
  /** For metrics and logs. */
  onOutcome?: (event: { channel: string; kind: OutgoingMessage['kind']; count: number; outcome: DeliveryOutcome; dead: boolean; durationMs: number }) => void;
}

export interface DeliverReport {
  delivered: number;
  retrying: number;
  dead: number;
}

/** An alert as read with ALERT_COLUMNS: its row, and its snapshot's text as `current`. */
type AlertRow = Omit<AlertsTable, 'id' | 'seq'> & { alert_id: string; current: string };

interface Claimable {
  attempts: number;
  claimed_by: number | null;
  next_attempt_at: string;
}

interface DueDelivery extends AlertRow, Claimable {
  id: number;
  channel: string;
}

interface DueDigest extends Claimable {
  id: string;
  rule: string;
  channel: string;
  created_at: string;
}

/** How long a claim holds off other processes while its process lives (then it is due again). */
export const CLAIM_LEASE_MS = 5 * 60_000;

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Due: its time has come and nobody is sending it, or the process that claimed it died (a crash
 * between sending and recording: it is sent again, with the same id, at once).
 */
function isDue(row: Claimable, nowIso: string): boolean {
  if (row.claimed_by === null) return row.next_attempt_at <= nowIso;
  if (row.next_attempt_at <= nowIso) return true; // lease over
  return row.claimed_by !== process.pid && !isAlive(row.claimed_by);
}


export function rowToAlert(row: AlertRow): Alert {
  return {
    id: row.alert_id,
    rule: row.rule,
    severity: row.severity as Alert['severity'],
    source: row.source as Alert['source'],
    entity: row.entity,
    trigger: row.trigger as Alert['trigger'],
    fired_at: row.fired_at,
    summary: row.summary,
    changes: JSON.parse(row.changes) as Alert['changes'],
    current: JSON.parse(row.current) as Alert['current'],
  };
}

/** Exponential backoff with jitter, or the server's Retry-After when it asked for longer. */
export function nextAttemptDelay(attempt: number, policy: RetryPolicy, retryAfterMs: number | undefined, random: () => number): number {
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
  const backoff = ceiling / 2 + (random() * ceiling) / 2;
  return Math.min(policy.maxMs, Math.max(backoff, retryAfterMs ?? 0));
}

async function mapLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await fn(items[next++]!);
  });
  await Promise.all(workers);
}

const ALERT_COLUMNS = `a.id AS alert_id, a.rule, a.severity, a.source, a.entity, a.trigger, a.fired_at, a.summary, a.changes, ${ALERT_CURRENT.column}`;

/** One send and the rows it settles. */
interface Job {
  channel: string;
  message: () => OutgoingMessage;
  count: number;
  /**
   * Claims the rows and counts the attempt, before the send. A row another process claimed
   * since it was read (its attempt count moved) is left to that process; false: nothing left.
   */
  start(at: string): boolean;
  /** Records the outcome; returns whether it ended dead. */
  finish(outcome: DeliveryOutcome, at: Date, durationMs: number): boolean;
}

function settle(
  attempts: number,
  outcome: DeliveryOutcome,
  at: Date,
  retry: RetryPolicy,
  random: () => number,
): { status: 'delivered' | 'dead' | 'pending'; nextAttemptAt: string | null; error: string | null } {
  if (outcome.ok) return { status: 'delivered', nextAttemptAt: null, error: null };
  if (!outcome.retryable || attempts >= retry.attempts) return { status: 'dead', nextAttemptAt: null, error: outcome.error };
  const delay = nextAttemptDelay(attempts, retry, outcome.retryAfterMs, random);
  return { status: 'pending', nextAttemptAt: new Date(at.getTime() + delay).toISOString(), error: outcome.error };
}

function deliveryJobs(store: Store, options: DeliverOptions, nowIso: string, retry: RetryPolicy, random: () => number, busy: ReadonlySet<string>): Job[] {
  const due = store.raw
    .prepare<[string], DueDelivery>(
      `SELECT d.id, d.channel, d.attempts, d.claimed_by, d.next_attempt_at, ${ALERT_COLUMNS}
       FROM deliveries d JOIN alerts a ON a.id = d.alert_id ${ALERT_CURRENT.joins}
       WHERE d.status = 'pending' AND (d.next_attempt_at <= ? OR d.claimed_by IS NOT NULL)
       ORDER BY d.next_attempt_at, d.id`,
    )
    .all(nowIso)
    .filter((row) => !busy.has(row.channel) && isDue(row, nowIso));
  const start = store.raw.prepare<[string, string, number, number, number]>(
    `UPDATE deliveries SET attempts = attempts + 1, last_attempt_at = ?, next_attempt_at = ?, claimed_by = ?
     WHERE id = ? AND attempts = ? AND status = 'pending'`,
  );
  const finish = store.raw.prepare<[string, string | null, string | null, string | null, number, number]>(
    'UPDATE deliveries SET status = ?, next_attempt_at = ?, last_error = ?, delivered_at = ?, duration_ms = ?, claimed_by = NULL WHERE id = ?',
  );
  const byChannel = new Map<string, DueDelivery[]>();
  for (const row of due) {
    const list = byChannel.get(row.channel);
    if (list) list.push(row);
    else byChannel.set(row.channel, [row]);
  }

  const job = (channel: string, due: DueDelivery[], group: boolean): Job => {
    let rows = due;
    return {
      channel,
      message: () => (group ? { kind: 'group', alerts: rows.map(rowToAlert) } : { kind: 'alert', alert: rowToAlert(rows[0]!) }),
      get count() {
        return rows.length;
      },
      start: (at) => {
        const lease = new Date(Date.parse(at) + CLAIM_LEASE_MS).toISOString();
        rows = store.raw.transaction(() => due.filter((row) => start.run(at, lease, process.pid, row.id, row.attempts).changes === 1))();
        return rows.length > 0;
      },
      finish: (outcome, at, durationMs) => {
        let dead = false;
        store.raw.transaction(() => {
          for (const row of rows) {
            const next = settle(row.attempts + 1, outcome, at, retry, random);
            dead ||= next.status === 'dead';
            finish.run(next.status, next.nextAttemptAt, next.error, outcome.ok ? at.toISOString() : null, durationMs, row.id);
          }
        })();
        return dead;
      },
    };
  };

  const jobs: Job[] = [];
  for (const [name, rows] of byChannel) {
    const kind = options.channels.get(name)?.type;
    if (kind && options.groupKinds?.has(kind) && rows.length > (options.groupAbove ?? 10)) {
      jobs.push(job(name, rows, true));
    } else {
      for (const row of rows) jobs.push(job(name, [row], false));
    }
  }
  return jobs;
}

function digestJobs(store: Store, nowIso: string, retry: RetryPolicy, random: () => number, busy: ReadonlySet<string>): Job[] {
  const due = store.raw
    .prepare<[string], DueDigest>(
      `SELECT id, rule, channel, attempts, claimed_by, next_attempt_at, created_at FROM digests
       WHERE status = 'pending' AND (next_attempt_at <= ? OR claimed_by IS NOT NULL) ORDER BY next_attempt_at, id`,
    )
    .all(nowIso)
    .filter((row) => !busy.has(row.channel) && isDue(row, nowIso));
  const members = store.raw.prepare<[string], AlertRow>(
    `SELECT ${ALERT_COLUMNS} FROM deliveries d JOIN alerts a ON a.id = d.alert_id ${ALERT_CURRENT.joins} WHERE d.digest_id = ? ORDER BY a.fired_at, a.id`,
  );
  const start = store.raw.prepare<[string, string, number, string, number]>(
    `UPDATE digests SET attempts = attempts + 1, last_attempt_at = ?, next_attempt_at = ?, claimed_by = ?
     WHERE id = ? AND attempts = ? AND status = 'pending'`,
  );
  const finish = store.raw.prepare<[string, string | null, string | null, string | null, number, string]>(
    'UPDATE digests SET status = ?, next_attempt_at = ?, last_error = ?, delivered_at = ?, duration_ms = ?, claimed_by = NULL WHERE id = ?',
  );
  // The alerts of a batch show the batch's delivery: `digest` while it is pending, then its outcome.
  const mirror = store.raw.prepare<[string, number, string | null, string | null, string]>(
    `UPDATE deliveries SET status = ?, attempts = ?, last_error = ?, delivered_at = ? WHERE digest_id = ?`,
  );
  return due.map((digest) => ({
    channel: digest.channel,
    count: 1,
    message: () => ({
      kind: 'digest',
      digest: { id: digest.id, rule: digest.rule, created_at: digest.created_at, alerts: members.all(digest.id).map(rowToAlert) },
    }),
    start: (at) => start.run(at, new Date(Date.parse(at) + CLAIM_LEASE_MS).toISOString(), process.pid, digest.id, digest.attempts).changes === 1,
    finish: (outcome, at, durationMs) => {
      const attempts = digest.attempts + 1;
      const next = settle(attempts, outcome, at, retry, random);
      const deliveredAt = outcome.ok ? at.toISOString() : null;
      store.raw.transaction(() => {
        finish.run(next.status, next.nextAttemptAt, next.error, deliveredAt, durationMs, digest.id);
        mirror.run(next.status === 'pending' ? 'digest' : next.status, attempts, next.error, deliveredAt, digest.id);
      })();
      return next.status === 'dead';
    },
  }));
}

/** Sends everything due now (new deliveries, closed digests, retries whose time has come). */
export async function deliverDue(store: Store, options: DeliverOptions): Promise<DeliverReport> {
  const retry = options.retry ?? DEFAULT_RETRY;
  const random = options.random ?? Math.random;
  const busy = options.busyChannels ?? new Set<string>();
  const report: DeliverReport = { delivered: 0, retrying: 0, dead: 0 };
  const nowIso = options.now().toISOString();
  const lanes = new Map<string, Job[]>();
  for (const job of [...deliveryJobs(store, options, nowIso, retry, random, busy), ...digestJobs(store, nowIso, retry, random, busy)]) {
    const lane = lanes.get(job.channel);
    if (lane) lane.push(job);
    else lanes.set(job.channel, [job]);
  }
  // Marked before the first await, so a pass started meanwhile sees them taken.
  for (const channel of lanes.keys()) busy.add(channel);

  const run = async (job: Job): Promise<void> => {
    // Rendering is synchronous: let the event loop (health checks, signals, replies) in between sends.
    await yieldToEventLoop();
    if (options.stopping?.() || !job.start(options.now().toISOString())) return;
    const channel = options.channels.get(job.channel);
    const message = job.message();
    const started = performance.now();
    let outcome: DeliveryOutcome;
    if (!channel) {
      outcome = { ok: false, retryable: false, error: `channel "${job.channel}" is no longer configured` };
    } else {
      try {
        outcome = await options.send(channel, message);
      } catch (error) {
        // A sender should return failures; one that throws is retried with its reason kept.
        outcome = { ok: false, retryable: true, error: (error as Error).message };
      }
    }
    const durationMs = Math.round(performance.now() - started);
    const dead = job.finish(outcome, options.now(), durationMs);
    if (outcome.ok) report.delivered += job.count;
    else if (dead) report.dead += job.count;
    else report.retrying += job.count;
    options.onOutcome?.({ channel: job.channel, kind: message.kind, count: job.count, outcome, dead, durationMs });
  };

  await Promise.all(
    [...lanes].map(async ([channel, jobs]) => {
      try {
        await mapLimit(jobs, options.concurrencyPerChannel ?? 8, run);
      } finally {
        busy.delete(channel);
      }
    }),
  );
  return report;
}
