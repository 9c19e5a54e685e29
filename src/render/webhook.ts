// The webhook payloads of the contract, serialized once: the same string is sent on every retry.
import type { Alert } from '../core/types.ts';
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
  changes: Array<{ field: string; from: unknown; to: unknown }>;
  current: Record<string, unknown>;
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
    changes: alert.changes.map((c) => ({ field: c.field, from: c.from ?? null, to: c.to ?? null })),
    current: alert.current,
  };
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
