// The outbox worker: sends what is due (alert deliveries, storms grouped per channel, closed digest
// batches) and records every attempt: claim (store), render and send (the channel's adapter),
// settle (store). Each channel is a lane of its own, with bounded concurrency,
// so a channel whose server stalls holds up only itself. At-least-once with a stable id: the
// attempt is counted before the send, so a crash in between leaves it pending and the next process
// sends it again with the same id.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { Alert, DeliveryOutcome, Explanation, MessageRef, Notice } from '../core/types.ts';
import { quietUntil, silencedBy, type Channel } from '../rules/index.ts';
import type { DigestMessage } from '../render/index.ts';
import { SLACK_TIMEOUT_MS, SMTP_TIMEOUTS, WEBHOOK_TIMEOUT_MS } from './channels/timeouts.ts';
import {
  claimSends,
  digestAlerts,
  dueSends,
  markSilenced,
  saveExplanation,
  settleSends,
  silencesEndingAfter,
  unsentDeliveries,
  type Send,
  type Settlement,
  type Store,
} from '../store/index.ts';

/**
 * What one send carries: one alert (a generation run's later notice with the Slack message of its
 * thread), a storm of alerts for one channel, a digest batch, or a notice (an alert resolved, with
 * the message it resolves; a source's health).
 */
export type OutgoingMessage =
  | { kind: 'alert'; alert: Alert; threadRef?: MessageRef }
  | { kind: 'group'; alerts: Alert[] }
  | { kind: 'digest'; digest: DigestMessage }
  | { kind: 'notice'; notice: Notice; replyTo?: MessageRef };

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
  /**
   * Asks the agent about an alert before its first delivery, for rules with `explain`; undefined
   * when its rule has none. Resolves to null when there is no answer (failed, timed out, over the
   * day's limit): the alert goes without.
   */
  explain?: (alert: Alert) => Promise<Explanation | null> | undefined;
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

/** How long silences are looked back on: an unsent delivery older than this is not checked again. */
const SILENCE_LOOKBACK_MS = 30 * 86_400_000;

/**
 * Marks `silenced` every delivery not attempted yet whose alert matched a silence when it fired:
 * stored, shown by `alerts`, never sent. Run at each delivery pass, so a silence made while the
 * daemon runs counts from the next pass.
 */
export async function silenceUnsent(store: Store, now: Date): Promise<number> {
  const silences = await silencesEndingAfter(store, new Date(now.getTime() - SILENCE_LOOKBACK_MS));
  if (silences.length === 0) return 0;
  const muted = (await unsentDeliveries(store)).filter((d) => silencedBy(silences, d.alert) !== undefined).map((d) => d.id);
  await markSilenced(store, muted);
  return muted.length;
}

/** The severity a send is judged by in quiet hours; health notices count as critical (an outage is news at any hour). */
function severityOf(send: Send): Alert['severity'] {
  if (send.kind === 'delivery') return send.alert.severity;
  if (send.kind === 'notice') return send.notice.kind === 'resolved' ? send.notice.alert.severity : 'critical';
  return 'info';
}

/** Waits: its channel's quiet hours hold now (critical ones go), or its alert's own delivery to the channel is still pending. */
function waits(send: Send, channels: ReadonlyMap<string, Channel>, now: Date): boolean {
  if (send.kind === 'notice' && send.alertDelivery && (send.alertDelivery.status === 'pending' || send.alertDelivery.status === 'digest')) return true;
  const quiet = channels.get(send.channel)?.quiet;
  return quiet !== undefined && severityOf(send) !== 'critical' && quietUntil(quiet, now) !== undefined;
}

/**
 * A generation run's second notice for a Slack channel waits while its first, which starts the
 * run's thread, has not been sent: it goes at a later pass, into that thread.
 */
function awaitsThread(channels: ReadonlyMap<string, Channel>): (send: Send) => boolean {
  const starting = new Set<string>();
  return (send) => {
    if (send.kind !== 'delivery' || send.alert.source !== 'runs' || send.threadRef || channels.get(send.channel)?.type !== 'slack') return false;
    const key = `${send.alert.entity}\u0000${send.channel}`;
    if (starting.has(key)) return true;
    starting.add(key);
    return false;
  };
}

/** One send to one channel: an alert, a storm of alerts grouped into one message, a digest, or a notice. */
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
    if (send.kind === 'digest' || send.kind === 'notice') {
      digests.push({ channel: send.channel, kind: send.kind, sends: [send] });
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
  if (first?.kind === 'notice') {
    const replyTo = first.alertDelivery?.ref ?? undefined;
    return { kind: 'notice', notice: first.notice, ...(replyTo ? { replyTo } : {}) };
  }
  if (job.kind === 'group') return { kind: 'group', alerts };
  const threadRef = first?.kind === 'delivery' ? first.threadRef : undefined;
  return { kind: 'alert', alert: alerts[0]!, ...(threadRef ? { threadRef } : {}) };
}

/** A resolved notice goes only where its alert was delivered. */
function undeliverable(send: Send): string | undefined {
  if (send.kind !== 'notice' || !send.alertDelivery || send.alertDelivery.status === 'delivered') return undefined;
  return `the alert was not delivered to this channel (${send.alertDelivery.status}): no resolved notice`;
}

/** Sends everything due now (new deliveries, closed digests, retries whose time has come). */
export async function deliverDue(store: Store, options: DeliverOptions): Promise<DeliverReport> {
  const retry = options.retry ?? DEFAULT_RETRY;
  const random = options.random ?? Math.random;
  const busy = options.busyChannels ?? new Set<string>();
  const report: DeliverReport = { delivered: 0, retrying: 0, dead: 0 };
  const now = options.now();
  const ready = (await dueSends(store, now)).filter((send) => !busy.has(send.channel) && !waits(send, options.channels, now));
  const threadLater = awaitsThread(options.channels);
  const due = ready.filter((send) => !threadLater(send));
  // One question per alert, however many of its channels this pass sends to.
  const explanations = new Map<string, Promise<Explanation | null>>();
  const explainFirst = async (alert: Alert): Promise<void> => {
    if (alert.explanation !== undefined || !options.explain) return;
    let asked = explanations.get(alert.id);
    if (!asked) {
      const question = options.explain(alert);
      if (question === undefined) return;
      asked = question.catch(() => null).then(async (answer) => {
        await saveExplanation(store, alert.id, answer, options.now());
        return answer;
      });
      explanations.set(alert.id, asked);
    }
    alert.explanation = await asked;
  };
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
    const notSent = undeliverable(claimed[0]!);
    if (!channel) {
      outcome = { ok: false, retryable: false, error: `channel "${job.channel}" is no longer configured` };
    } else if (notSent !== undefined) {
      outcome = { ok: false, retryable: false, error: notSent };
    } else {
      // Asked before the first delivery; a failure or time-out sends the alert without.
      if (message.kind === 'alert') await explainFirst(message.alert);
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
      ...(outcome.ok && outcome.ref ? { ref: outcome.ref } : {}),
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
