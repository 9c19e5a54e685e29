// The outbox worker: sends the deliveries that are due, with bounded concurrency, and records
// every attempt. At-least-once with a stable id: the attempt is counted before the send, so a
// crash in between leaves a pending delivery that the next process sends again with the same id.
import type { Alert, Channel, DeliveryOutcome } from '../core/types.ts';
import type { Store } from '../store/index.ts';

/** Sends one alert, or a group of alerts for one channel, as one message. */
export type SendToChannel = (channel: Channel, alerts: readonly Alert[]) => Promise<DeliveryOutcome>;

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
  concurrency?: number;
  /** Channels of a kind that can group: more than this many due alerts for one channel go as one message. */
  groupAbove?: number;
  groupKinds?: ReadonlySet<Channel['type']>;
  random?: () => number;
  /** Hook for metrics and logs. */
  onOutcome?: (event: { channel: Channel; alertIds: string[]; outcome: DeliveryOutcome; dead: boolean; durationMs: number }) => void;
}

export interface DeliverReport {
  delivered: number;
  retrying: number;
  dead: number;
}

interface DueRow {
  id: number;
  alert_id: string;
  channel: string;
  attempts: number;
  rule: string;
  severity: string;
  source: string;
  entity: string;
  trigger: string;
  fired_at: string;
  summary: string;
  changes: string;
  current: string;
}

export function rowToAlert(row: Omit<DueRow, 'id' | 'alert_id' | 'channel' | 'attempts'> & { id: string }): Alert {
  return {
    id: row.id,
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

/** Exponential backoff with full jitter, or the server's Retry-After when it asked for longer. */
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

/** Sends every delivery due now (new ones and retries whose time has come) and records the outcomes. */
export async function deliverDue(store: Store, options: DeliverOptions): Promise<DeliverReport> {
  const retry = options.retry ?? DEFAULT_RETRY;
  const random = options.random ?? Math.random;
  const report: DeliverReport = { delivered: 0, retrying: 0, dead: 0 };
  const nowIso = options.now().toISOString();
  const due = store.raw
    .prepare<[string], DueRow>(
      `SELECT d.id, d.alert_id, d.channel, d.attempts, a.rule, a.severity, a.source, a.entity, a.trigger,
              a.fired_at, a.summary, a.changes, a.current
       FROM deliveries d JOIN alerts a ON a.id = d.alert_id
       WHERE d.status = 'pending' AND d.next_attempt_at <= ?
       ORDER BY d.next_attempt_at, d.id`,
    )
    .all(nowIso);
  if (due.length === 0) return report;

  const startAttempt = store.raw.prepare<[string, number]>(
    'UPDATE deliveries SET attempts = attempts + 1, last_attempt_at = ? WHERE id = ?',
  );
  const finish = store.raw.prepare<[string, string | null, string | null, string | null, number, number]>(
    'UPDATE deliveries SET status = ?, next_attempt_at = ?, last_error = ?, delivered_at = ?, duration_ms = ? WHERE id = ?',
  );

  // Group by channel; a channel that can group and has a storm due gets one message.
  const byChannel = new Map<string, DueRow[]>();
  for (const row of due) {
    const list = byChannel.get(row.channel) ?? [];
    list.push(row);
    byChannel.set(row.channel, list);
  }
  const jobs: Array<{ channel: Channel | undefined; name: string; rows: DueRow[] }> = [];
  for (const [name, rows] of byChannel) {
    const channel = options.channels.get(name);
    const groups = channel && options.groupKinds?.has(channel.type) && rows.length > (options.groupAbove ?? 10);
    if (groups) jobs.push({ channel, name, rows });
    else for (const row of rows) jobs.push({ channel, name, rows: [row] });
  }

  await mapLimit(jobs, options.concurrency ?? 8, async ({ channel, name, rows }) => {
    const startedAt = options.now();
    const started = Date.now();
    const mark = store.raw.transaction(() => {
      for (const row of rows) startAttempt.run(startedAt.toISOString(), row.id);
    });
    mark();
    let outcome: DeliveryOutcome;
    if (!channel) {
      outcome = { ok: false, retryable: false, error: `channel "${name}" is no longer configured` };
    } else {
      try {
        outcome = await options.send(channel, rows.map((row) => rowToAlert({ ...row, id: row.alert_id })));
      } catch (error) {
        // A sender that throws has a bug or an unexpected transport failure: retry, keep the reason.
        outcome = { ok: false, retryable: true, error: (error as Error).message };
      }
    }
    const durationMs = Date.now() - started;
    const record = store.raw.transaction(() => {
      for (const row of rows) {
        const attempt = row.attempts + 1;
        if (outcome.ok) {
          finish.run('delivered', null, null, options.now().toISOString(), durationMs, row.id);
        } else if (!outcome.retryable || attempt >= retry.attempts) {
          finish.run('dead', null, outcome.error, null, durationMs, row.id);
        } else {
          const delay = nextAttemptDelay(attempt, retry, outcome.retryAfterMs, random);
          finish.run('pending', new Date(options.now().getTime() + delay).toISOString(), outcome.error, null, durationMs, row.id);
        }
      }
    });
    record();
    const dead = !outcome.ok && (!outcome.retryable || rows.some((row) => row.attempts + 1 >= retry.attempts));
    if (outcome.ok) report.delivered += rows.length;
    else if (dead) report.dead += rows.length;
    else report.retrying += rows.length;
    if (channel) options.onOutcome?.({ channel, alertIds: rows.map((r) => r.alert_id), outcome, dead, durationMs });
  });
  return report;
}
