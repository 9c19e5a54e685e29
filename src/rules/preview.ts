// The alert a rule would send for an entity's change, whether or not its trigger fires now: what
// `render` shows. Built as the planner builds an alert (id from its cause, summary, changes). Pure.
import { alertId, causeKey } from '../core/alert-id.ts';
import type { Alert, Snapshot } from '../core/types.ts';
import { changesFor } from './evaluate.ts';
import type { Rule } from './schema.ts';
import { summarize } from './summary.ts';

export function previewAlert(rule: Rule, entity: string, previous: Snapshot | undefined, current: Snapshot, seq: number, now: Date): Alert {
  return {
    id: alertId(causeKey(rule.name, rule.source, entity, seq)),
    rule: rule.name,
    severity: rule.severity,
    source: rule.source,
    entity,
    trigger: rule.trigger.type,
    fired_at: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
    summary: summarize(rule, previous, current),
    changes: changesFor(rule.trigger, previous, current),
    current,
  };
}
