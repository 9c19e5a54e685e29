// The one-line summary of a firing, for people:
//   Fed decision December: edge +12.3 pp crossed above 10 pp
//   Acme Q3 deliveries: actual 1.2M appeared
import type { Snapshot, SourceName } from '../core/types.ts';
import type { Rule } from './schema.ts';
import { getPath } from './path.ts';
import { asNumber, isAbsent } from './values.ts';

const NEW_NOUN: Record<SourceName, string> = { events: 'new event', kpis: 'new KPI event', reports: 'new report', runs: 'new run' };

export function summarize(rule: Rule, prev: Snapshot | undefined, curr: Snapshot): string {
  return `${entityTitle(rule.source, curr)}: ${what(rule, prev, curr)}`;
}

/** How people name an entity of a source. */
export function entityTitle(source: SourceName, snapshot: Snapshot): string {
  const text = (path: string) => {
    const value = getPath(snapshot, path);
    return typeof value === 'string' && value.trim() !== '' ? oneLine(value) : undefined;
  };
  switch (source) {
    case 'events':
      return text('name') ?? text('event_ticker') ?? 'event';
    case 'kpis':
      return [text('company_name'), text('kpi_name')].filter(Boolean).join(' ') || text('id') || 'KPI event';
    case 'reports': {
      const key = text('venue') && text('event_ticker') ? `${text('venue')}/${text('event_ticker')}` : undefined;
      return text('title') ?? text('name') ?? key ?? 'report';
    }
    case 'runs': {
      const run = `run ${text('run_id') ?? '?'}`;
      const ticker = text('event_ticker');
      return ticker ? `${run} for ${ticker}` : run;
    }
  }
}

function what(rule: Rule, prev: Snapshot | undefined, curr: Snapshot): string {
  const { trigger } = rule;
  if (trigger.type === 'new') return NEW_NOUN[rule.source];
  const shown = displayed(trigger.field, curr);
  const before = prev === undefined ? undefined : displayed(trigger.field, prev).value;
  const label = shown.label;
  const after = shown.value;
  const pp = isPp(trigger.field);
  switch (trigger.type) {
    case 'crosses': {
      const threshold = trigger.above ?? trigger.below ?? 0;
      const side = trigger.above !== undefined ? 'above' : 'below';
      const negative = (asNumber(after) ?? 0) < 0;
      const absolute = trigger.abs && negative ? ' in absolute value' : '';
      return `${label} ${formatValue(after, pp)} crossed ${side} ${formatNumber(threshold, false)}${pp ? ' pp' : ''}${absolute}`;
    }
    case 'appears':
      return `${label} ${formatValue(after, pp)} appeared`;
    case 'moves': {
      const from = asNumber(before);
      const to = asNumber(after);
      const delta = from !== undefined && to !== undefined ? ` (${formatNumber(to - from, true)}${pp ? ' pp' : ''})` : '';
      return `${label} ${formatValue(before, pp)} -> ${formatValue(after, pp)}${delta}`;
    }
    case 'flips':
    case 'changes':
    case 'drops':
    case 'rises':
      return `${label} ${formatValue(before, pp)} -> ${formatValue(after, pp)}`;
  }
}

/**
 * The label and value to show for a field. A KPI value's `.value` shows as the KPI value object,
 * so that its `formatted` text is used (`actual 1.2M`, not `actual.value 1200000`).
 */
function displayed(field: string, snapshot: Snapshot): { label: string; value: unknown } {
  if (field.endsWith('.value')) {
    const parentPath = field.slice(0, -'.value'.length);
    const parent = getPath(snapshot, parentPath);
    if (isKpiValue(parent)) return { label: parentPath, value: parent };
  }
  const label = isPp(field) ? field.slice(0, -'_pp'.length).replaceAll('_', ' ') : field;
  return { label, value: getPath(snapshot, field) };
}

function isPp(field: string): boolean {
  return field.endsWith('_pp');
}

function isKpiValue(value: unknown): value is { value?: unknown; unit?: unknown; formatted?: unknown } {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && ('formatted' in value || 'unit' in value);
}

/** Display text of a snapshot value; numbers on *_pp fields carry a sign and ` pp`. */
export function formatValue(value: unknown, pp = false): string {
  if (isAbsent(value)) return 'none';
  if (typeof value === 'number') return pp ? `${formatNumber(value, true)} pp` : formatNumber(value, false);
  if (typeof value === 'string') return truncate(oneLine(value));
  if (typeof value === 'boolean') return String(value);
  if (isKpiValue(value)) {
    if (typeof value.formatted === 'string' && value.formatted !== '') return oneLine(value.formatted);
    const number = asNumber(value.value);
    if (number === undefined) return 'none';
    return typeof value.unit === 'string' && value.unit !== '' ? `${formatNumber(number, false)} ${value.unit}` : formatNumber(number, false);
  }
  return truncate(JSON.stringify(value));
}

function formatNumber(value: number, signed: boolean): string {
  const rounded = Number(value.toFixed(Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 1 ? 1 : 2));
  const text = String(Object.is(rounded, -0) ? 0 : rounded);
  return signed && rounded > 0 ? `+${text}` : text;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function truncate(text: string, max = 80): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
