// The outbox worker: sends what is due (alert deliveries, storms grouped per channel, closed digest
// batches) and records every attempt: claim (store), render and send (the channel's adapter),
// settle (store). Each channel is a lane of its own, with bounded concurrency,
// so a channel whose server stalls holds up only itself. At-least-once with a stable id: the
// attempt is counted before the send, so a crash in between leaves it pending and the next process
// sends it again with the same id.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Alert, DeliveryOutcome } from '../core/types.ts';
import type { Channel } from '../rules/index.ts';
import type { DigestMessage } from '../render/index.ts';
import { SLACK_TIMEOUT_MS, SMTP_TIMEOUTS, WEBHOOK_TIMEOUT_MS } from './channels/index.ts';
import { claimSends, digestAlerts, dueSends, settleSends, type Send, type Settlement, type Store } from '../store/index.ts';

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

/** The longest one send to a channel of each kind can take: its transport's timeouts. */
const SEND_LIMIT_MS: Record<Channel['type'], number> = {
  webhook: WEBHOOK_TIMEOUT_MS,
  slack: SLACK_TIMEOUT_MS,
  email: SMTP_TIMEOUTS.connectionTimeout + SMTP_TIMEOUTS.greetingTimeout + SMTP_TIMEOUTS.socketTimeout,
  console: 0,
};

/**
 * How long a claim holds off other processes: three times the longest a send to the channel can
 * take (a Slack send may make more than one call), and at least 30 s. A process that dies mid-send
 * leaves its claim to run out, and then another sends it again with the same id, never earlier.
 */
export function claimLeaseMs(type: Channel['type'] | undefined): number {
  return Math.max(30_000, 3 * (type === undefined ? 0 : SEND_LIMIT_MS[type]));
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

/** One send to one channel: an alert, a storm of alerts grouped into one message, or a digest. */
interface Job {
  channel: string;
  kind: OutgoingMessage['kind'];
  sends: Send[];
}

function settle(
  attempts: number,
  outcome: DeliveryOutcome,
  at: Date,
  retry: RetryPolicy,
  random: () => number,
): Pick<Settlement, 'status' | 'nextAttemptAt' | 'error'> {
  if (outcome.ok) return { status: 'delivered', nextAttemptAt: null, error: null };
  if (!outcome.retryable || attempts >= retry.attempts) return { status: 'dead', nextAttemptAt: null, error: outcome.error };
  const delay = nextAttemptDelay(attempts, retry, outcome.retryAfterMs, random);
  return { status: 'pending', nextAttemptAt: new Date(at.getTime() + delay).toISOString(), error: outcome.error };
}

/** The due sends as jobs: more alerts than `groupAbove` for one channel of a grouping kind go as one message. */
function jobsOf(due: readonly Send[], options: DeliverOptions): Job[] {
  const alertsByChannel = new Map<string, Send[]>();
  const digests: Job[] = [];
  for (const send of due) {
    if (send.kind === 'digest') {
      digests.push({ channel: send.channel, kind: 'digest', sends: [send] });
      continue;
    }
    const list = alertsByChannel.get(send.channel);
    if (list) list.push(send);
    else alertsByChannel.set(send.channel, [send]);
  }
  const jobs: Job[] = [];
  for (const [channel, sends] of alertsByChannel) {
    const type = options.channels.get(channel)?.type;
    if (type && options.groupKinds?.has(type) && sends.length > (options.groupAbove ?? 10)) jobs.push({ channel, kind: 'group', sends });
    else for (const send of sends) jobs.push({ channel, kind: 'alert', sends: [send] });
  }
  return [...jobs, ...digests];
}

/** What a claimed job sends (a digest's alerts are read now, when it goes). */
async function messageOf(store: Store, job: Job, claimed: Send[]): Promise<OutgoingMessage> {
  const alerts = claimed.flatMap((send) => (send.kind === 'delivery' ? [send.alert] : []));
  const [first] = claimed;
  if (first?.kind === 'digest') {
    return { kind: 'digest', digest: { id: first.id, rule: first.rule, created_at: first.createdAt, alerts: await digestAlerts(store, first.id) } };
  }
  return job.kind === 'group' ? { kind: 'group', alerts } : { kind: 'alert', alert: alerts[0]! };
}

/** Sends everything due now (new deliveries, closed digests, retries whose time has come). */
export async function deliverDue(store: Store, options: DeliverOptions): Promise<DeliverReport> {
  const retry = options.retry ?? DEFAULT_RETRY;
  const random = options.random ?? Math.random;
  const busy = options.busyChannels ?? new Set<string>();
  const report: DeliverReport = { delivered: 0, retrying: 0, dead: 0 };
  const due = (await dueSends(store, options.now())).filter((send) => !busy.has(send.channel));
  const lanes = new Map<string, Job[]>();
  for (const job of jobsOf(due, options)) {
    const lane = lanes.get(job.channel);
    if (lane) lane.push(job);
    else lanes.set(job.channel, [job]);
  }
  // Marked before the next await, so a pass started meanwhile sees them taken.
  for (const channel of lanes.keys()) busy.add(channel);

  // Claim (store), render and send (the channel's adapter), settle (store).
  const run = async (job: Job): Promise<void> => {
    // Rendering is synchronous: let the event loop (health checks, signals, replies) in between sends.
    await yieldToEventLoop();
    if (options.stopping?.()) return;
    const at = options.now();
    const channel = options.channels.get(job.channel);
    const claimed = await claimSends(store, job.sends, at, process.pid, new Date(at.getTime() + claimLeaseMs(channel?.type)));
    if (claimed.length === 0) return;
    const message = await messageOf(store, job, claimed);
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
    const settledAt = options.now();
    const settlements = claimed.map((send): Settlement => ({
      send,
      ...settle(send.attempts + 1, outcome, settledAt, retry, random),
      deliveredAt: outcome.ok ? settledAt.toISOString() : null,
      durationMs,
    }));
    await settleSends(store, settlements);
    const dead = settlements.some((s) => s.status === 'dead');
    const count = claimed.length;
    if (outcome.ok) report.delivered += count;
    else if (dead) report.dead += count;
    else report.retrying += count;
    options.onOutcome?.({ channel: job.channel, kind: message.kind, count, outcome, dead, durationMs });
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
