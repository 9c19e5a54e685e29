// The outbox of a test pipeline, wired as the service wires it (real channel adapters, real
// templates), with the test's clock, a small retry policy and a short webhook timeout.
import { closeDueBatches, deliverDue, silenceUnsent, type DeliverReport, type RetryPolicy } from '../../src/notify/index.ts';
import { createExplainer } from '../../src/service/explain.ts';
import { loadTemplates, type TemplateSet } from '../../src/render/index.ts';
import { createChannelSender, GROUPING_KINDS } from '../../src/service/senders.ts';
import { TEMPLATES_DIR, type Pipeline } from './pipeline.ts';
import type { Sql } from './sql.ts';

export const SMALL_RETRY: RetryPolicy = { attempts: 5, baseMs: 1_000, maxMs: 60_000 };

export interface Transports {
  slackToken?: string;
  slackApiUrl?: string;
  smtpUrl?: string;
  emailFrom?: string;
}

export interface DeliverStep {
  /** The outbox's clock for this step (also the webhook timestamp); wall clock by default. */
  now?: Date;
  retry?: RetryPolicy;
  webhookTimeoutMs?: number;
  /** Close due digest batches first, as `poll --once` does (all of them with `flush`). */
  digests?: 'due' | 'flush';
  out?: (line: string) => void;
  /** The templates folder's set; the shipped `templates/` by default. */
  templates?: TemplateSet;
  /** Rules with `explain` ask the pipeline's sandbox agent, as the daemon does. */
  explain?: { dailyLimit?: number };
  /** Silences first, as every delivery pass does. */
  silences?: boolean;
}

let shipped: TemplateSet | undefined;

/** One delivery pass over the pipeline's store: what `poll --once` does after polling. */
export async function deliverStep(pipeline: Pipeline, transports: Transports, step: DeliverStep = {}): Promise<DeliverReport> {
  shipped ??= await loadTemplates(TEMPLATES_DIR);
  const at = step.now ?? new Date();
  const now = (): Date => at;
  const { ruleSet } = pipeline;
  if (step.digests !== undefined) {
    await closeDueBatches(pipeline.store, new Map(ruleSet.rules.map((r) => [r.name, r])), at, { flush: step.digests === 'flush' });
  }
  const send = createChannelSender({
    config: {
      slackToken: transports.slackToken,
      slackApiUrl: transports.slackApiUrl,
      smtpUrl: transports.smtpUrl,
      emailFrom: transports.emailFrom ?? 'edgewatch@alerts.example.com',
    },
    templates: step.templates ?? shipped,
    rules: ruleSet.rules,
    out: step.out ?? (() => {}),
    webhookTimeoutMs: step.webhookTimeoutMs ?? 2_000,
    now,
  });
  if (step.silences) await silenceUnsent(pipeline.store, at);
  const explain = step.explain
    ? createExplainer({ api: pipeline.api, store: pipeline.store, rules: ruleSet.rules, templates: step.templates ?? shipped, dailyLimit: step.explain.dailyLimit ?? 50, now })
    : undefined;
  return deliverDue(pipeline.store, {
    channels: ruleSet.channels,
    send,
    now,
    retry: step.retry ?? SMALL_RETRY,
    groupKinds: GROUPING_KINDS,
    // Deterministic backoff: half the ceiling.
    random: () => 0,
    explain,
  });
}

export interface DeliveryRow {
  alert_id: string;
  rule: string;
  entity: string;
  channel: string;
  status: string;
  attempts: number;
  last_error: string | null;
  next_attempt_at: string | null;
  digest_id: string | null;
}

export function deliveryRows(sql: Sql): DeliveryRow[] {
  return sql
    .prepare<[], DeliveryRow>(
      `SELECT d.alert_id, a.rule, a.entity, d.channel, d.status, d.attempts, d.last_error, d.next_attempt_at, d.digest_id
       FROM deliveries d JOIN alerts a ON a.id = d.alert_id ORDER BY d.id`,
    )
    .all();
}

/** Minutes after a time, as a Date. */
export function later(at: Date, ms: number): Date {
  return new Date(at.getTime() + ms);
}
