// The fields a rule may name, per source, as the research API names them (PRODUCT.md "Sources",
// api/research-data.md). Unknown fields are validation errors: a typo must not silently
// disable an alert.
import { editDistance } from '../core/suggest.ts';
import type { SourceName } from '../core/types.ts';

/**
 * What a field holds. `kpi-value` is the API's `{value, unit, formatted}` object (dotted into
 * by `.value`, `.unit`, `.formatted`); `object` and `array` accept any dotted path below them.
 */
export type FieldKind = 'number' | 'string' | 'boolean' | 'ordinal' | 'kpi-value' | 'object' | 'array';

/** Ordinal orders, best first. */
export const ORDINAL_ORDERS: Readonly<Record<string, readonly string[]>> = {
  trust_label: ['Strong', 'Good', 'Caution', 'High Risk', 'Avoid'],
  evidence_grade: ['A', 'B', 'C', 'D'],
  liquidity_tier: ['high', 'medium', 'low'],
};

const EVENT_FIELDS: Record<string, FieldKind> = {
  history_id: 'number',
  run_id: 'string',
  captured_at: 'string',
  event_ticker: 'string',
  name: 'string',
  slug: 'string',
  image_url: 'string',
  series_category: 'string',
  available_on_brokers: 'boolean',
  mutually_exclusive: 'boolean',
  analysis_last_updated: 'string',
  confidence_score: 'number',
  model_probability: 'number',
  market_probability: 'number',
  edge_pp: 'number',
  abs_edge_pp: 'number',
  expected_return: 'number',
  r_score: 'number',
  total_volume: 'number',
  total_open_interest: 'number',
  close_time: 'string',
  key_takeaway: 'string',
  current_state_summary_richtext: 'string',
  short_answer_richtext: 'string',
  executive_summary_richtext: 'string',
  outcome_probabilities: 'array',
  has_history: 'boolean',
  research: 'object',
  eligible: 'boolean',
  eligibility_status: 'string',
  eligibility_reason: 'string',
};

const KPI_FIELDS: Record<string, FieldKind> = {
  id: 'string',
  kpi_id: 'string',
  company_name: 'string',
  company_ticker: 'string',
  kpi_name: 'string',
  period: 'string',
  period_label: 'string',
  period_kind: 'string',
  status: 'string',
  expected_report_date: 'string',
  market_implied: 'kpi-value',
  market_implied_as_of: 'string',
  octagon_estimate_value: 'kpi-value',
  edge_absolute_value: 'kpi-value',
  edge_market_age_days: 'number',
  actual: 'kpi-value',
  company_guidance: 'kpi-value',
  model_probability: 'number',
  market_probability: 'number',
  edge_pp: 'number',
  signal: 'string',
  near_settled: 'boolean',
  newsworthiness: 'number',
  liquidity_tier: 'ordinal',
  strike_count: 'number',
  strike_period: 'string',
  actual_source: 'string',
  reported_at: 'string',
  close_time: 'string',
};

const REPORT_FIELDS: Record<string, FieldKind> = {
  ...EVENT_FIELDS,
  run_id: 'string',
  trust_score: 'number',
  trust_label: 'ordinal',
  title: 'string',
  venue: 'string',
  event_ticker: 'string',
};

const RUN_FIELDS: Record<string, FieldKind> = {
  run_id: 'string',
  status: 'string',
  venue: 'string',
  event_ticker: 'string',
  requested_url: 'string',
  title: 'string',
  trust_label: 'ordinal',
};

/** Top-level snapshot fields per source. */
export const SOURCE_FIELDS: Readonly<Record<SourceName, Readonly<Record<string, FieldKind>>>> = {
  events: EVENT_FIELDS,
  kpis: KPI_FIELDS,
  reports: REPORT_FIELDS,
  runs: RUN_FIELDS,
};

const KPI_VALUE_FIELDS: Record<string, FieldKind> = { value: 'number', unit: 'string', formatted: 'string' };

/** The ordinal order for a field path (by its last segment), or undefined when it is not ordinal. */
export function ordinalOrder(path: string): readonly string[] | undefined {
  const last = path.slice(path.lastIndexOf('.') + 1);
  return Object.hasOwn(ORDINAL_ORDERS, last) ? ORDINAL_ORDERS[last] : undefined;
}

/**
 * What a dotted path names in a source's snapshot: its kind (`unknown` below an open object),
 * or a message saying why the path does not exist.
 */
export type FieldCheck = { ok: true; kind: FieldKind | 'unknown' } | { ok: false; message: string };

export function checkField(source: SourceName, path: string): FieldCheck {
  const segments = path.split('.');
  // Messages quote the whole path as JSON, the one form in which a value from `${NAME}` is
  // recognized and shown as written.
  const quoted = JSON.stringify(path);
  if (path === '' || segments.some((s) => s === '')) return { ok: false, message: `${quoted} is not a field path` };
  const fields = SOURCE_FIELDS[source];
  const [first, ...rest] = segments as [string, ...string[]];
  const kind = Object.hasOwn(fields, first) ? fields[first] : undefined;
  if (kind === undefined) {
    return { ok: false, message: `unknown field ${quoted} for source ${source}${suggest(first, Object.keys(fields))}` };
  }
  if (rest.length === 0) return { ok: true, kind };
  if (kind === 'object' || kind === 'array') {
    return { ok: true, kind: ordinalOrder(path) ? 'ordinal' : 'unknown' };
  }
  if (kind === 'kpi-value') {
    const [second, ...deeper] = rest as [string, ...string[]];
    const sub = Object.hasOwn(KPI_VALUE_FIELDS, second) ? KPI_VALUE_FIELDS[second] : undefined;
    if (sub === undefined || deeper.length > 0) {
      return {
        ok: false,
        message: `unknown field ${quoted} for source ${source}: ${first} is a KPI value with value, unit and formatted`,
      };
    }
    return { ok: true, kind: sub };
  }
  return { ok: false, message: `unknown field ${quoted} for source ${source}: ${first} is a ${kind}, not an object` };
}

/** ` (did you mean a, b?)` naming the known names closest to `name`, or all of them when none is close. */
function suggest(name: string, known: string[]): string {
  const scored = known
    .map((candidate) => ({ candidate, distance: closeness(name, candidate) }))
    .filter((s) => s.distance <= Math.max(2, Math.floor(name.length / 3)))
    .sort(
      (a, b) =>
        a.distance - b.distance ||
        Math.abs(a.candidate.length - name.length) - Math.abs(b.candidate.length - name.length) ||
        a.candidate.localeCompare(b.candidate),
    )
    .slice(0, 3);
  if (scored.length > 0) return ` (did you mean ${scored.map((s) => s.candidate).join(', ')}?)`;
  return ` (known fields: ${[...known].sort().join(', ')})`;
}

/** Edit distance, with a containing name (edge vs edge_pp) counted as close. */
function closeness(a: string, b: string): number {
  if (a.length >= 3 && (b.includes(a) || a.includes(b))) return 1;
  return editDistance(a, b);
}
