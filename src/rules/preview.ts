// The alert a rule would send for an entity's change, whether or not its trigger fires now: what
// `render` shows. Built as the planner builds an alert (id from its cause, summary, changes). Pure.
import { alertId, causeKey } from '../core/alert-id.ts';
import type { Alert, Snapshot } from '../core/types.ts';
import { changesFor, isBeyond } from './evaluate.ts';
import type { Rule, Trigger } from './schema.ts';
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

/**
 * A sample change that the rule's own trigger reports (`render` without `--entity`). One that it
 * reports already is kept; otherwise, for `crosses`, the field goes from within the threshold (past
 * the re-arm distance) to just beyond it; for `moves`, it moves 1.5 times `by` in its direction.
 * Other triggers, and a field the sample does not hold as a number at its top level, keep the
 * sample as it is.
 */
export function sampleForTrigger(trigger: Trigger, previous: Snapshot, current: Snapshot): { previous: Snapshot; current: Snapshot } {
  if (trigger.type !== 'crosses' && trigger.type !== 'moves') return { previous, current };
  const { field } = trigger;
  const before = previous[field];
  const after = current[field];
  if (typeof before !== 'number' || typeof after !== 'number') return { previous, current };
  const integers = Number.isInteger(before) && Number.isInteger(after);
  const round = (x: number): number => (integers ? Math.round(x) : Math.round(x * 1e4) / 1e4);
  if (trigger.type === 'moves') {
    const moved = trigger.direction === 'down' ? before - after : trigger.direction === 'up' ? after - before : Math.abs(after - before);
    if (moved >= trigger.by) return { previous, current };
    const sign = trigger.direction === 'down' ? -1 : 1;
    const by = integers ? Math.ceil(trigger.by * 1.5) : trigger.by * 1.5;
    return { previous, current: { ...current, [field]: round(before + sign * by) } };
  }
  if (!isBeyond(trigger, before) && isBeyond(trigger, after)) return { previous, current };
  const threshold = (trigger.above ?? trigger.below)!;
  const sign = trigger.above !== undefined ? 1 : -1;
  // Just beyond (the next whole number, for whole numbers such as a rank), and back before it far
  // enough to be armed.
  const beyond = integers ? 1 : threshold === 0 ? 1 : Math.abs(threshold) * 0.05;
  const within = Math.max(beyond, integers ? Math.ceil(trigger.rearm * 1.5) : trigger.rearm * 1.5);
  return { previous: { ...previous, [field]: round(threshold - sign * within) }, current: { ...current, [field]: round(threshold + sign * beyond) } };
}
