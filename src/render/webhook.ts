// The webhook payloads of the contract, serialized once: the same string is sent on every retry.
import type { Alert, Explanation, Notice } from '../core/types.ts';
import type { DigestMessage } from './types.ts';

export interface WebhookAlertPayload {
  version: 1;
  type: 'alert';
  id: string;
  rule: string;
  severity: Alert['severity'];
  source: Alert['source'];
  entity: string;
  trigger: Alert['trigger'];
  fired_at: string;
  summary: string;
  /** `added`: on an `added` trigger's change, the elements the list gained. */
  changes: Array<{ field: string; from: unknown; to: unknown; added?: unknown[] }>;
  current: Record<string, unknown>;
  /** The agent's cited answer (`explain`); null when there is none. */
  explanation: Explanation | null;
}

/** An alert's condition cleared: its own id, the alert it resolves. */
export interface WebhookResolvedPayload {
  version: 1;
  type: 'resolved';
  id: string;
  alert_id: string;
  rule: string;
  severity: Alert['severity'];
  source: Alert['source'];
  entity: string;
  trigger: Alert['trigger'];
  fired_at: string;
  resolved_at: string;
  summary: string;
  changes: Array<{ field: string; from: unknown; to: unknown }>;
  current: Record<string, unknown>;
}

/** A source's health changed: `degraded` after failed polls, `recovered` at the next good one. */
export interface WebhookHealthPayload {
  version: 1;
  type: 'health';
  id: string;
  source: string;
  status: 'degraded' | 'recovered';
  error: string | null;
  at: string;
}

export interface WebhookDigestPayload {
  version: 1;
  type: 'digest';
  id: string;
  rule: string;
  alerts: WebhookAlertPayload[];
}

/** Exactly the contract's fields, in its order, nothing else. */
export function webhookAlertPayload(alert: Alert): WebhookAlertPayload {
  return {
    version: 1,
    type: 'alert',
    id: alert.id,
    rule: alert.rule,
    severity: alert.severity,
    source: alert.source,
    entity: alert.entity,
    trigger: alert.trigger,
    fired_at: alert.fired_at,
    summary: alert.summary,
    changes: alert.changes.map((c) => ({ field: c.field, from: c.from ?? null, to: c.to ?? null, ...(c.added === undefined ? {} : { added: c.added }) })),
    current: alert.current,
    explanation: alert.explanation ?? null,
  };
}

export function webhookNoticeBody(notice: Notice): string {
  if (notice.kind === 'health') {
    const payload: WebhookHealthPayload = { version: 1, type: 'health', id: notice.id, source: notice.source, status: notice.status, error: notice.error, at: notice.at };
    return JSON.stringify(payload);
  }
  const { alert } = notice;
  const payload: WebhookResolvedPayload = {
    version: 1,
    type: 'resolved',
    id: notice.id,
    alert_id: alert.id,
    rule: alert.rule,
    severity: alert.severity,
    source: alert.source,
    entity: alert.entity,
    trigger: alert.trigger,
    fired_at: alert.fired_at,
    resolved_at: notice.resolved_at,
    summary: notice.summary,
    changes: notice.changes.map((c) => ({ field: c.field, from: c.from ?? null, to: c.to ?? null })),
    current: notice.current,
  };
  return JSON.stringify(payload);
}

export function webhookBody(alert: Alert): string {
  return JSON.stringify(webhookAlertPayload(alert));
}

/** `send-test`'s body: an alert's fields with `type: "test"`, so that a receiver can tell it from an alert. */
export function webhookTestBody(alert: Alert): string {
  return JSON.stringify({ ...webhookAlertPayload(alert), type: 'test' });
}

export function webhookDigestBody(digest: DigestMessage): string {
  const payload: WebhookDigestPayload = {
    version: 1,
    type: 'digest',
    id: digest.id,
    rule: digest.rule,
    alerts: digest.alerts.map(webhookAlertPayload),
  };
  return JSON.stringify(payload);
}
