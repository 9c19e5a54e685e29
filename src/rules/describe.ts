// A rule's trigger and filter in words, for people reading the status page:
//   edge_pp crosses above 10, re-arms at 8
//   series_category = politics, confidence_score ≥ 6
// Pure.
import type { FilterClause, FilterOperator, Trigger } from './schema.ts';

const OPERATOR_WORDS: Record<FilterOperator, string> = { gt: '>', gte: '≥', lt: '<', lte: '≤', eq: '=', ne: '≠', in: 'in', not_in: 'not in', contains: 'contains' };

function shown(value: unknown): string {
  if (Array.isArray(value)) return value.map(shown).join(', ');
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Several values: `completed`, `completed or failed`. */
function either(value: unknown): string {
  return Array.isArray(value) ? value.map(shown).join(' or ') : shown(value);
}

/** A crosses trigger's threshold and the level at which it re-arms (the threshold back by `rearm`). */
export interface Threshold {
  side: 'above' | 'below';
  value: number;
  rearmAt: number;
  /** The absolute value is compared: the lines hold on both sides of zero. */
  abs: boolean;
}

export function thresholdOf(trigger: Trigger): Threshold | undefined {
  if (trigger.type !== 'crosses') return undefined;
  if (trigger.above !== undefined) return { side: 'above', value: trigger.above, rearmAt: trigger.above - trigger.rearm, abs: trigger.abs };
  if (trigger.below !== undefined) return { side: 'below', value: trigger.below, rearmAt: trigger.below + trigger.rearm, abs: trigger.abs };
  return undefined;
}

/** The field a trigger watches, when it watches one. */
export function triggerField(trigger: Trigger): string | undefined {
  return 'field' in trigger && typeof trigger.field === 'string' ? trigger.field : undefined;
}

export function triggerInWords(trigger: Trigger): string {
  const threshold = thresholdOf(trigger);
  if (threshold) {
    const absolute = threshold.abs ? ' in absolute value' : '';
    return `${triggerField(trigger)} crosses ${threshold.side} ${threshold.value}${absolute}, re-arms at ${round(threshold.rearmAt)}`;
  }
  switch (trigger.type) {
    case 'moves':
      return `${trigger.field} moves${trigger.direction === 'any' ? '' : ` ${trigger.direction}`} by ${trigger.by} or more`;
    case 'flips':
      return `${trigger.field} flips${trigger.to === undefined ? '' : ` to ${trigger.to}`}`;
    case 'changes':
      return `${trigger.field} changes${trigger.from === undefined ? '' : ` from ${either(trigger.from)}`}${trigger.to === undefined ? '' : ` to ${either(trigger.to)}`}`;
    case 'drops':
      return `${trigger.field} drops by ${steps(trigger.by)}${trigger.to_at_most === undefined ? '' : ` to ${trigger.to_at_most} or lower`}`;
    case 'rises':
      return `${trigger.field} rises by ${steps(trigger.by)}${trigger.to_at_least === undefined ? '' : ` to ${trigger.to_at_least} or higher`}`;
    case 'appears':
      return `${trigger.field} appears`;
    case 'new':
      return 'a new entity appears';
    default: {
      // A trigger type added since: its type and field.
      const field = triggerField(trigger);
      return field === undefined ? String((trigger as { type: string }).type) : `${(trigger as { type: string }).type} on ${field}`;
    }
  }
}

function steps(by: number): string {
  return `${by} step${by === 1 ? '' : 's'}`;
}

/** Floating-point noise out of a computed level (10 - 0.1 is 9.9, not 9.900000000000000355). */
function round(n: number): number {
  return Math.round(n * 1e9) / 1e9;
}

/** `series_category = politics, confidence_score ≥ 6`; empty for no filter. */
export function filterInWords(filter: readonly FilterClause[]): string {
  return filter
    .flatMap((clause) => clause.conditions.map((condition) => `${clause.field} ${OPERATOR_WORDS[condition.op]} ${shown(condition.value)}`))
    .join(', ');
}
