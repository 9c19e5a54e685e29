// The one-line summary of a firing, for people:
//   Fed decision December: edge +12.3 pp crossed above 10 pp
//   Acme (ACME) — Deliveries, Q3 2026: actual 1.2M appeared
import { entityTitle } from '../core/entity-title.ts';
import { formatDuration } from '../core/duration.ts';
import { formatDelta, formatThreshold, formatValue, oneLine, words } from '../core/format.ts';
import type { Snapshot, SourceName } from '../core/types.ts';
import { isRecord } from '../core/values.ts';
import { nullIsUnranked } from './fields.ts';
import { getPath } from './path.ts';
import type { Rule } from './schema.ts';
import { addedElements, asNumber } from './values.ts';

const NEW_NOUN: Record<SourceName, string> = {
  events: 'new event',
  kpis: 'new KPI event',
  reports: 'new report',
  runs: 'new run',
  edge: 'new model edge',
  rankings: 'new in the ranking',
  markets: 'new market',
  similar: 'new similar market',
  baskets: 'new basket',
};

/** `new in the ranking at #3`, `new similar market (distance 0.18)`. */
function newEntity(source: SourceName, curr: Snapshot): string {
  const noun = NEW_NOUN[source];
  const rank = asNumber(curr.rank);
  const distance = asNumber(curr.distance);
  if (source === 'rankings' && rank !== undefined) return `${noun} at ${formatValue('rank', rank)}`;
  if (source === 'similar' && distance !== undefined) return `${noun} (distance ${distance})`;
  return noun;
}

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
  if (trigger.type === 'new') return newEntity(rule.source, curr);
  const shown = displayed(trigger.field, curr);
  const before = prev === undefined ? undefined : displayed(trigger.field, prev).value;
  const show = (value: unknown) => truncate(oneLine(formatValue(shown.field, value)));
  const { label } = shown;
  const after = shown.value;
  switch (trigger.type) {
    case 'crosses': {
      const threshold = formatThreshold(shown.field, trigger.above ?? trigger.below ?? 0);
      const side = trigger.above !== undefined ? 'above' : 'below';
      const absolute = trigger.abs && (asNumber(after) ?? 0) < 0 ? ' in absolute value' : '';
      if (after === null && nullIsUnranked(rule.source, trigger.field)) return `out of the ranking (${label} crossed ${side} ${threshold})`;
      return `${label} ${show(after)} crossed ${side} ${threshold}${absolute}`;
    }
    case 'added': {
      // `new warning: two legs close within 7 days`
      const added = addedElements(before, after);
      const noun = added.length === 1 ? label.replace(/s$/, '') : label;
      return `new ${words(noun)}: ${truncate(added.map((item) => oneLine(typeof item === 'string' ? item : JSON.stringify(item))).join('; '), 160)}`;
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
