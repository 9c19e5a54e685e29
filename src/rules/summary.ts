// The one-line summary of a firing, for people:
//   Fed decision December: edge +12.3 pp crossed above 10 pp
//   Acme (ACME) — Deliveries, Q3 2026: actual 1.2M appeared
import { entityTitle } from '../core/entity-title.ts';
import { formatDuration } from '../core/duration.ts';
import { formatDelta, formatValue, oneLine } from '../core/format.ts';
import type { Snapshot, SourceName } from '../core/types.ts';
import { isRecord } from '../core/values.ts';
import { getPath } from './path.ts';
import type { Rule } from './schema.ts';
import { asNumber } from './values.ts';

const NEW_NOUN: Record<SourceName, string> = { events: 'new event', kpis: 'new KPI event', reports: 'new report', runs: 'new run' };

export function summarize(rule: Rule, prev: Snapshot | undefined, curr: Snapshot): string {
  return `${entityTitle(rule.source, curr)}: ${what(rule, prev, curr)}`;
}

/** The one-line summary of a resolution: the condition of a crosses or overdue alert cleared. */
export function summarizeResolution(rule: Rule, curr: Snapshot): string {
  const { trigger } = rule;
  const title = entityTitle(rule.source, curr);
  if (trigger.type !== 'crosses' && trigger.type !== 'overdue') return `${title}: resolved`;
  const shown = displayed(trigger.field, curr);
  const value = truncate(oneLine(formatValue(shown.field, shown.value)));
  if (trigger.type === 'overdue') return `${title}: resolved: ${shown.label} ${value} appeared`;
  const threshold = trigger.above ?? trigger.below ?? 0;
  const pp = trigger.field.endsWith('_pp') ? ' pp' : '';
  return `${title}: resolved: ${shown.label} ${value} back within ${threshold}${pp}`;
}

function what(rule: Rule, prev: Snapshot | undefined, curr: Snapshot): string {
  const { trigger } = rule;
  if (trigger.type === 'new') return NEW_NOUN[rule.source];
  const shown = displayed(trigger.field, curr);
  const before = prev === undefined ? undefined : displayed(trigger.field, prev).value;
  const show = (value: unknown) => truncate(oneLine(formatValue(shown.field, value)));
  const { label } = shown;
  const after = shown.value;
  const pp = trigger.field.endsWith('_pp') ? ' pp' : '';
  switch (trigger.type) {
    case 'crosses': {
      const threshold = trigger.above ?? trigger.below ?? 0;
      const side = trigger.above !== undefined ? 'above' : 'below';
      const absolute = trigger.abs && (asNumber(after) ?? 0) < 0 ? ' in absolute value' : '';
      return `${label} ${show(after)} crossed ${side} ${threshold}${pp}${absolute}`;
    }
    case 'appears':
      return `${label} ${show(after)} appeared`;
    case 'overdue': {
      const due = getPath(curr, trigger.due);
      const grace = trigger.graceMs > 0 ? ` + ${formatDuration(trigger.graceMs)}` : '';
      return `${label} still missing past its due date ${truncate(oneLine(String(due)))}${grace}`;
    }
    case 'moves': {
      const delta = formatDelta(shown.field, before, after);
      return `${label} ${show(before)} -> ${show(after)}${delta !== undefined ? ` (${delta})` : ''}`;
    }
    case 'flips':
    case 'changes':
    case 'drops':
    case 'rises':
      return `${label} ${show(before)} -> ${show(after)}`;
  }
}

/**
 * The label, field and value to show for a trigger's field. A KPI value's `.value` shows as the
 * KPI value object, so that its `formatted` text is used (`actual 1.2M`, not `actual.value 1200000`).
 */
function displayed(field: string, snapshot: Snapshot): { label: string; field: string; value: unknown } {
  if (field.endsWith('.value')) {
    const parentPath = field.slice(0, -'.value'.length);
    const parent = getPath(snapshot, parentPath);
    if (isKpiValue(parent)) return { label: parentPath, field: parentPath, value: parent };
  }
  const label = field.endsWith('_pp') ? field.slice(0, -'_pp'.length).replaceAll('_', ' ') : field;
  return { label, field, value: getPath(snapshot, field) };
}

function isKpiValue(value: unknown): boolean {
  return isRecord(value) && ('formatted' in value || 'unit' in value);
}

function truncate(text: string, max = 80): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
